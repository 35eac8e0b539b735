# Fuzzing with libFuzzer (included by the Makefile).
#
#   make fuzz                   every target for FUZZ_SECONDS (default 60) each
#   make -j2 fuzz               two at a time
#   make fuzz-yaml FUZZ_SECONDS=600
#   make fuzz-build             build the fuzzers only
#
# Targets (tests/fuzz/targets.h): yaml, pipeline, diff.  Each runs on the
# committed seeds (tests/fuzz/corpus/TARGET/) and regressions
# (tests/fuzz/regressions/TARGET/); what it learns goes to
# tests/fuzz/corpus-run/TARGET/ (not committed), what it finds to
# $(BUILD)/fuzz/artifacts/TARGET/.  Runs fork mode, so an out-of-memory or a
# timeout is recorded and the run goes on; a crash stops it and fails make.
# A crash input becomes tests/fuzz/regressions/TARGET/NAME once cigen is
# fixed (`make check` replays every file there).

FUZZ_SECONDS ?= 60
FUZZ_CC      ?= $(shell command -v clang-14 2>/dev/null || command -v clang 2>/dev/null || echo clang)
FUZZ_TARGETS := yaml pipeline diff
FUZZ_DIR     := $(BUILD)/fuzz
FUZZ_SAN     := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS  = $(FUZZ_EXTRA_CFLAGS) -std=c11 -D_XOPEN_SOURCE=700 -DCIGEN_VERSION='"$(VERSION)"' -g -O1 $(FUZZ_SAN) \
               $(PKG_CFLAGS) -Igenerator -Itests/fuzz
# per target: the longest input and the dictionary
FUZZ_MAXLEN_yaml     := 131072
FUZZ_MAXLEN_pipeline := 32768
FUZZ_MAXLEN_diff     := 16384
FUZZ_RUN_FLAGS ?= -fork=1 -ignore_ooms=1 -ignore_timeouts=1 -timeout=10 -rss_limit_mb=2048 \
                  -malloc_limit_mb=1024 -print_final_stats=1

FUZZ_LIB_OBJ := $(LIB_SRC:generator/%.c=$(FUZZ_DIR)/obj/%.o)

.PHONY: fuzz fuzz-build $(FUZZ_TARGETS:%=fuzz-%)

fuzz: $(FUZZ_TARGETS:%=fuzz-%)
fuzz-build: $(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz-%)

$(FUZZ_DIR)/obj/%.o: generator/%.c $(HEADERS) tests/fuzz/fuzz.mk | $(BUILD)/.deps-ok
	@mkdir -p $(@D)
	@$(if $(V),,echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_DIR)/obj/targets.o: tests/fuzz/targets.c tests/fuzz/targets.h $(HEADERS) tests/fuzz/fuzz.mk | $(BUILD)/.deps-ok
	@mkdir -p $(@D)
	@$(if $(V),,echo "  FUZZCC  $<")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_TARGETS:%=$(FUZZ_DIR)/obj/main-%.o): $(FUZZ_DIR)/obj/main-%.o: tests/fuzz/libfuzzer.c tests/fuzz/targets.h tests/fuzz/fuzz.mk | $(BUILD)/.deps-ok
	@mkdir -p $(@D)
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -DCG_FUZZ_TARGET=cg_fuzz_$* -c $< -o $@

$(FUZZ_TARGETS:%=$(FUZZ_DIR)/fuzz-%): $(FUZZ_DIR)/fuzz-%: $(FUZZ_DIR)/obj/main-%.o $(FUZZ_DIR)/obj/targets.o $(FUZZ_LIB_OBJ)
	@$(if $(V),,echo "  LINK    $@")
	$(Q)$(FUZZ_CC) $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ $(PKG_LIBS)

# The fuzzer's exit status is 0 when it ran out of time without a crash.
$(FUZZ_TARGETS:%=fuzz-%): fuzz-%: $(FUZZ_DIR)/fuzz-%
	@mkdir -p tests/fuzz/corpus-run/$* tests/fuzz/corpus/$* tests/fuzz/regressions/$* $(FUZZ_DIR)/artifacts/$*
	@echo "  FUZZ    $* for $(FUZZ_SECONDS)s (log: $(FUZZ_DIR)/fuzz-$*.log)"
	@$(FUZZ_DIR)/fuzz-$* $(FUZZ_RUN_FLAGS) -max_total_time=$(FUZZ_SECONDS) \
	  -max_len=$(FUZZ_MAXLEN_$*) -dict=tests/fuzz/$*.dict \
	  -artifact_prefix=$(FUZZ_DIR)/artifacts/$*/ \
	  tests/fuzz/corpus-run/$* tests/fuzz/corpus/$* tests/fuzz/regressions/$* \
	  >$(FUZZ_DIR)/fuzz-$*.log 2>&1; rc=$$?; \
	  grep -E '^#[0-9]+: cov|^stat::|DONE|ERROR|SUMMARY' $(FUZZ_DIR)/fuzz-$*.log | tail -4; \
	  ls $(FUZZ_DIR)/artifacts/$* | sed 's|^|  found: $(FUZZ_DIR)/artifacts/$*/|'; \
	  if [ $$rc -ne 0 ] || ls $(FUZZ_DIR)/artifacts/$* | grep -q '^crash-'; then \
	    echo "fuzz-$*: FAILED (exit $$rc); see $(FUZZ_DIR)/fuzz-$*.log"; exit 1; fi

# The check suite includes targets.c: rebuild it when they change.
$(BUILD)/tests/check_robust.o: tests/fuzz/targets.c tests/fuzz/targets.h
