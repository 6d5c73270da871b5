#!/usr/bin/env bash
# The house style (.clang-format) holds for every C and C++ source the repository tracks:
# lists the files clang-format would change and fails if there is one. `clang-format -i FILE`
# puts a file in the house style.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.c')
else
  mapfile -t files < <(find common guest tools trace xen tests bench -name '*.cpp' -o -name '*.h' -o -name '*.c')
fi
unformatted=()
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  clang-format --dry-run --Werror "$f" >/dev/null 2>&1 || unformatted+=("$f")
done
if [ ${#unformatted[@]} -gt 0 ]; then
  echo "check_format: ${#unformatted[@]} of ${#files[@]} files are not in the house style (clang-format -i them):"
  printf '  %s\n' "${unformatted[@]}"
  exit 1
fi
echo "check_format: ${#files[@]} files in the house style"
