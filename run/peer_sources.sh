# Sourced by the run/build_*.sh scripts that build a peer from its public sources into a scratch
# prefix outside the repository (nothing of it is committed or copied into pdsp).

unpack() {  # $1: source tree or bare git repository (a mirror: its HEAD is exported), $2: directory to fill
  rm -rf "$2" && mkdir -p "$2"
  if [ -f "$1/HEAD" ] && [ -d "$1/objects" ]; then
    git --git-dir="$1" archive HEAD | tar -x -C "$2"
  else
    cp -r "$1/." "$2"
  fi
}
