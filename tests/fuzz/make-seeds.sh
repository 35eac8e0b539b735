#!/bin/sh
# Rebuilds the seed corpora of the fuzz targets from the golden and bad cases and the
# embedded default:  tests/fuzz/make-seeds.sh  (from the repository root).
#
#   corpus/yaml/      every YAML file of tests/golden/*/in, tests/bad/*/in and of the default
#   corpus/pipeline/  every golden project and the default, as one input:
#                     its files, each after a line "%% PATH" (targets.c)
#   corpus/diff/      committed and expected config.yml of the golden cases
#                     that change it, as two halves of one input
set -eu
cd "$(dirname "$0")/../.."
out=tests/fuzz/corpus
rm -rf "$out/yaml" "$out/pipeline" "$out/diff"
mkdir -p "$out/yaml" "$out/pipeline" "$out/diff"

# one project folder -> one pipeline input (sources only, no outputs)
project_input() { # DIR STRICT
    (
        cd "$1"
        [ "$2" = strict ] && printf '%%%% --strict\n'
        find . -type f -name '*.yml' ! -path './config.yml' ! -path './diagrams/*' | sed 's|^\./||' | LC_ALL=C sort |
            while IFS= read -r f; do
                printf '%%%% %s\n' "$f"
                cat "$f"
                [ -z "$(tail -c 1 "$f")" ] || echo
            done
    )
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# a case's project (tests/README.md): its base project, without the paths of
# its `without` lines, then its in/ over it
case_input() { # CASE DEST
    rm -rf "$2" && mkdir -p "$2"
    if [ -f "$1/base" ]; then
        cp -R "tests/bases/$(head -n 1 "$1/base")/." "$2/"
        sed -n 's/^without //p' "$1/base" | while IFS= read -r p; do rm -rf "${2:?}/$p"; done
    fi
    [ -d "$1/in" ] || return 0
    # an entry of in/ replaces the base's, unless both are folders (merged)
    (cd "$1/in" && find . -mindepth 1) | while IFS= read -r p; do
        if [ ! -d "$1/in/$p" ] || [ -L "$1/in/$p" ] || [ ! -d "$2/$p" ] || [ -L "$2/$p" ]; then
            rm -rf "${2:?}/$p"
        fi
    done
    cp -R "$1/in/." "$2/"
}

# two texts -> two halves of equal length (the shorter padded with newlines)
halves() {
    a=$(wc -c <"$1"); b=$(wc -c <"$2")
    cat "$1"; [ "$a" -ge "$b" ] || head -c $((b - a)) /dev/zero | tr '\0' '\n'
    cat "$2"; [ "$b" -ge "$a" ] || head -c $((a - b)) /dev/zero | tr '\0' '\n'
}

for c in tests/golden/*/ tests/bad/*/; do
    name=$(basename "$c")
    [ -d "$c/in" ] || [ -f "$c/base" ] || continue
    case_input "$c" "$tmp/in"
    (cd "$tmp/in" && find . -type f -name '*.yml' | sed 's|^\./||') | while IFS= read -r f; do
        cp "$tmp/in/$f" "$out/yaml/$name--$(echo "$f" | tr / _)"
    done
    strict=no
    grep -q -- --strict "$c/cmd" 2>/dev/null && strict=strict
    project_input "$tmp/in" "$strict" >"$out/pipeline/$name"
    # committed config.yml against what cigen generates (build/cigen)
    if [ -f "$tmp/in/config.yml" ] && [ -x build/cigen ]; then
        rm -rf "$tmp/g" && cp -R "$tmp/in" "$tmp/g"
        build/cigen -q -C "$tmp/g" generate --force >/dev/null 2>&1 || build/cigen -q -C "$tmp/g" generate >/dev/null 2>&1 || true
        if ! cmp -s "$tmp/in/config.yml" "$tmp/g/config.yml"; then
            halves "$tmp/in/config.yml" "$tmp/g/config.yml" >"$out/diff/$name"
        fi
    fi
done

# the embedded default
for f in cigen.yml dimensions/*.yml templates/*.yml verbatim-sources/*.yml; do
    cp "$f" "$out/yaml/default--$(echo "$f" | tr / _)"
done
mkdir -p "$tmp/p"
cp -R cigen.yml dimensions templates verbatim-sources "$tmp/p/"
project_input "$tmp/p" no >"$out/pipeline/default"
# a few edits of the default's config.yml for the diff target
head -c 8000 config.yml >"$tmp/a"
sed -e 's/cu100/cu101/' -e '/^  # /d' "$tmp/a" >"$tmp/b"
halves "$tmp/a" "$tmp/b" >"$out/diff/default-edits"

# drop duplicates (same bytes), keep the first name
for d in yaml pipeline diff; do
    (cd "$out/$d" && LC_ALL=C ls | while IFS= read -r f; do
        echo "$(cksum <"$f" | tr ' ' -) $f"
    done | LC_ALL=C sort -s -k1,1 | awk 'seen[$1]++ { print $2 }' | xargs -r rm -f)
done
echo "seeds: $(ls "$out/yaml" | wc -l) yaml, $(ls "$out/pipeline" | wc -l) pipeline, $(ls "$out/diff" | wc -l) diff"
