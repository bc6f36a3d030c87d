# Sourced by the tests that resume a checkpoint fixture of an earlier build.
# expect_fixture_theta REFERENCE RESULT WHAT: RESULT's /theta must be REFERENCE's bit for bit,
# or within 1e-9 relative: the fixtures come from an AMD EPYC (AVX-512), and another processor's
# vector exp and log may round differently in the last bit. A misread checkpoint moves theta far
# more than this.
expect_fixture_theta() {
  local reference=$1 result=$2 what=$3
  if h5diff "$reference" "$result" /theta > /dev/null; then
    echo "ok: $what resumes bitwise"
  elif h5diff --relative=1e-9 "$reference" "$result" /theta > /dev/null; then
    echo "ok: $what resumes within 1e-9 (not bitwise: this processor's libm rounds otherwise)"
  else
    echo "FAIL: resumed from $what, theta differs from that build's run"
    exit 1
  fi
}
