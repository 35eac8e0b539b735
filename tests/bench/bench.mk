# The performance benchmark; included by the Makefile, not part of `make check`.
#
#   make bench           the embedded default, the examples and the default
#                        sharded up to CircleCI's 8 MB (in build/bench/),
#                        against PyYAML reading the same config; then the
#                        merge-driver benchmark
#   make bench BENCH_SHARDS="10 40" BENCH_RUNS=3    a quicker run
#   make bench-merge     only the merge-driver benchmark (tests/bench/merge.sh):
#                        a whole `git merge` in a 10,000-file repository
#   make bench-profile   callgrind and massif of generate and check (100k jobs
#                        by default, BENCH_PROFILE_SIZE=10k for a quick one)
#
# See tests/bench/README.md for what is measured and the targets.

BENCH_DIR := $(BUILD)/bench
BENCH_ENV = CIGEN=$(abspath $(BUILD)/cigen) GENPROJ=$(abspath $(BENCH_DIR)/genproj) \
            BENCH_DIR=$(abspath $(BENCH_DIR)) CIGEN_SRCDIR=$(CURDIR)

.PHONY: bench bench-merge bench-profile

$(BENCH_DIR)/genproj: tests/bench/genproj.c tests/bench/bench.mk | $(BUILD)/.deps-ok
	@mkdir -p $(BENCH_DIR)
	@$(if $(V),,echo "  CC      $<")
	$(Q)$(CC) -std=c11 -D_XOPEN_SOURCE=700 $(WARN) -O2 $(CFLAGS) -o $@ $<

bench: $(BUILD)/cigen $(BENCH_DIR)/genproj
	@$(BENCH_ENV) bash tests/bench/run.sh
	@$(BENCH_ENV) bash tests/bench/merge.sh

bench-merge: $(BUILD)/cigen $(BENCH_DIR)/genproj
	@$(BENCH_ENV) bash tests/bench/merge.sh

bench-profile: $(BUILD)/cigen $(BENCH_DIR)/genproj
	@$(BENCH_ENV) bash tests/bench/profile.sh
