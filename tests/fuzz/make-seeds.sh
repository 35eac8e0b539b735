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

# two texts -> two halves of equal length (the shorter padded with newlines)
halves() {
    a=$(wc -c <"$1"); b=$(wc -c <"$2")
    cat "$1"; [ "$a" -ge "$b" ] || head -c $((b - a)) /dev/zero | tr '\0' '\n'
    cat "$2"; [ "$b" -ge "$a" ] || head -c $((a - b)) /dev/zero | tr '\0' '\n'
}

for c in tests/golden/*/ tests/bad/*/; do
    name=$(basename "$c")
    [ -d "$c/in" ] || continue
    (cd "$c/in" && find . -type f -name '*.yml' | sed 's|^\./||') | while IFS= read -r f; do
        cp "$c/in/$f" "$out/yaml/$name--$(echo "$f" | tr / _)"
    done
    strict=no
    grep -q -- --strict "$c/cmd" 2>/dev/null && strict=strict
    project_input "$c/in" "$strict" >"$out/pipeline/$name"
    # committed config.yml against what cigen generates (build/cigen)
    if [ -f "$c/in/config.yml" ] && [ -x build/cigen ]; then
        rm -rf "$tmp/g" && cp -R "$c/in" "$tmp/g"
        build/cigen -q -C "$tmp/g" generate --force >/dev/null 2>&1 || build/cigen -q -C "$tmp/g" generate >/dev/null 2>&1 || true
        if ! cmp -s "$c/in/config.yml" "$tmp/g/config.yml"; then
            halves "$c/in/config.yml" "$tmp/g/config.yml" >"$out/diff/$name"
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
