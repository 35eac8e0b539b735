#!/usr/bin/env python3
"""Shards the embedded default project: `shard.py DIR N` rewrites
DIR/dimensions/binary_builds.yml so that its whole tree repeats under a
first dimension `shard` of N values (s000, s001, ...), each job's name
starting with its shard; everything else (templates, fragments, workflows,
tiers) stays as it is.  The config grows by about 100 KB a shard."""
import re
import sys

path = sys.argv[1] + "/dimensions/binary_builds.yml"
n = int(sys.argv[2])
text = open(path).read()
text = text.replace("dimensions: [os,", "dimensions: [shard, os,", 1)
text = text.replace('pattern: "binary_{{ os }}', 'pattern: "binary_{{ shard }}_{{ os }}', 1)
text = text.replace('job_name: "smoke_{{ os }}', 'job_name: "smoke_{{ shard }}_{{ os }}', 1)
head, rest = text.split("\ntree:\n", 1)
m = re.search(r"\n(?=[a-z_]+:)", rest)  # the next top-level key
tree, tail = rest[: m.start() + 1], rest[m.start() + 1 :]
shards = ", ".join("s%03d" % i for i in range(n))
indented = "".join("    " + l if l.strip() else l for l in tree.splitlines(True))
text = head + "\ntree:\n  - shard: [" + shards + "]\n    children:\n" + indented + tail
open(path, "w").write(text)
