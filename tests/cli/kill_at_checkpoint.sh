# Sourced by the CLI tests. kill_at_first_checkpoint DIR OUT COMMAND...: runs COMMAND (a pdsp
# train writing checkpoints to DIR and its model to OUT) in the background, kills it with
# SIGKILL once DIR/latest is published, and fails the test when no checkpoint came first or the
# run had already written its model.
kill_at_first_checkpoint() {
  local directory=$1 out=$2
  shift 2
  "$@" > /dev/null &
  local runner=$!
  for _ in $(seq 1500); do
    [ -e "$directory/latest" ] && break
    sleep 0.02
  done
  kill -9 $runner 2> /dev/null || true
  wait $runner 2> /dev/null || true
  [ -e "$directory/latest" ] || { echo "FAIL: no checkpoint before the kill"; exit 1; }
  [ ! -e "$out" ] || { echo "FAIL: the run ended before the kill"; exit 1; }
}
