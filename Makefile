# cigen — CircleCI configuration generator.  See README.md.
#
#   make            build build/cigen (installs missing -dev packages when root)
#   make check      build and run every test (and `make layers`)
#   make layers     check the layering rule of generator/ (docs/architecture.md)
#   make check-bless rewrite the golden and bad cases' expectations from the
#                   current build (tests/README.md); review the diff; never in CI
#   make asan       the whole test suite under AddressSanitizer + UBSan
#   make tsan       the whole test suite under ThreadSanitizer
#   make memcheck   the whole test suite under valgrind (CK_FORK=no)
#   make fuzz       run the libFuzzer targets (FUZZ_SECONDS each)
#   make bench      the performance benchmark (tests/bench/)
#   make install    PREFIX=/usr/local DESTDIR= (binary, man page, bash and zsh completion)
#   make static     build/cigen-static (libyaml, jansson, nettle, pcre2 and libc linked in,
#                   stripped) and build/cigen-static.sha256
#   make check-static  that binary in an empty root, then the whole suite against it
#                   (`make check CIGEN=FILE` runs the suite against any binary)
#   make dist       build/cigen-VERSION.tar.gz from the committed tree, byte-identical
#                   run after run; `make distcheck` proves it and builds the tarball
#   make deb        the Debian package (dpkg-buildpackage -us -uc -b), into build/
#   make uninstall / clean / deps

PREFIX     ?= /usr/local
BINDIR     ?= $(PREFIX)/bin
MANDIR     ?= $(PREFIX)/share/man
# shell completion: where bash-completion and zsh look by default
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
ZSHCOMPDIR  ?= $(PREFIX)/share/zsh/site-functions
BUILD      ?= build
CC         ?= cc
PKG_CONFIG ?= pkg-config
VERSION    := $(shell cat VERSION)

WARN   := -Wall -Wextra -Werror -Wshadow -Wpointer-arith -Wstrict-prototypes \
          -Wmissing-prototypes -Wformat=2 -Wvla -Wwrite-strings -Wcast-align \
          -Wundef -Wnull-dereference -Wimplicit-fallthrough
OPT    ?= -O2 -g
# Recursive (=) on purpose: evaluated when a recipe runs, after `deps` did its work.
PKG_CFLAGS = $(shell $(PKG_CONFIG) --cflags yaml-0.1 jansson nettle libpcre2-8)
PKG_LIBS   = $(shell $(PKG_CONFIG) --libs yaml-0.1 jansson nettle libpcre2-8)
CHECK_CFLAGS = $(shell $(PKG_CONFIG) --cflags check)
CHECK_LIBS   = $(shell $(PKG_CONFIG) --libs check)
ALL_CFLAGS = -std=c11 -pthread -Igenerator -D_XOPEN_SOURCE=700 -DCIGEN_VERSION='"$(VERSION)"' \
             $(WARN) $(OPT) $(PKG_CFLAGS) $(CPPFLAGS) $(CFLAGS) $(EXTRA_CFLAGS)
ALL_LDFLAGS = -pthread $(LDFLAGS) $(EXTRA_LDFLAGS)

LIB_SRC  := $(sort $(wildcard generator/*/*.c))
LIB_OBJ  := $(LIB_SRC:generator/%.c=$(BUILD)/obj/%.o)
MAIN_OBJ := $(BUILD)/obj/main.o
TEST_SRC := $(sort $(wildcard tests/check_*.c)) tests/run_tests.c tests/testutil.c
TEST_OBJ := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%.o)
HEADERS  := $(wildcard generator/*/*.h tests/*.h)

.PHONY: all check check-bless layers asan tsan memcheck install uninstall clean deps deps-tests \
        static check-static dist distcheck deb
all: $(BUILD)/cigen

deps:
	@build-aux/ensure-deps.sh
deps-tests:
	@build-aux/ensure-deps.sh --with-tests

$(BUILD)/.deps-ok: build-aux/ensure-deps.sh | $(BUILD)
	@build-aux/ensure-deps.sh
	@touch $@
# after .deps-ok: under make -j the two would run apt-get at once, and one
# fails on its lock
$(BUILD)/.deps-tests-ok: build-aux/ensure-deps.sh | $(BUILD)/.deps-ok
	@build-aux/ensure-deps.sh --with-tests
	@touch $@

$(BUILD):
	@mkdir -p $(BUILD)/obj $(BUILD)/tests

# The layering rule of generator/ (docs/architecture.md): fails on an upward
# include, an include or call cycle between modules (the calls read from the
# objects with nm), or file access or printing outside io/ and cmd/.
layers: $(LIB_OBJ)
	@build-aux/check-layers.sh generator $(BUILD)/obj

# `make V=1` shows the full commands.
Q = $(if $(V),,@)
$(BUILD)/obj/%.o: generator/%.c $(HEADERS) Makefile VERSION | $(BUILD)/.deps-ok
	@mkdir -p $(@D)
	@$(if $(V),,echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

$(BUILD)/cigen: $(LIB_OBJ) $(MAIN_OBJ)
	@$(if $(V),,echo "  LINK    $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(PKG_LIBS)

$(BUILD)/tests/%.o: tests/%.c $(HEADERS) Makefile | $(BUILD)/.deps-tests-ok
	@$(if $(V),,echo "  CC      $<")
	$(Q)$(CC) $(ALL_CFLAGS) $(CHECK_CFLAGS) -c $< -o $@

$(BUILD)/run_tests: $(LIB_OBJ) $(TEST_OBJ)
	@$(if $(V),,echo "  LINK    $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -o $@ $^ $(CHECK_LIBS) $(PKG_LIBS)

# The runner finds the binary and the test data through these variables, so the
# same runner works for the plain, sanitizer and valgrind builds.  `make check
# CIGEN=FILE` runs the suite against another binary (the static one, an
# installed one); only a CIGEN given on make's command line counts, never one
# in the environment (regenerate.sh of a `cigen init` project reads that).
TEST_CIGEN = $(abspath $(if $(filter command line,$(origin CIGEN)),$(CIGEN),$(BUILD)/cigen))
check: layers $(BUILD)/cigen $(BUILD)/run_tests
	@CIGEN=$(TEST_CIGEN) CIGEN_SRCDIR=$(CURDIR) $(BUILD)/run_tests

# Records what the current binary does as the expectations of the golden and
# bad cases (CIGEN_CASES=PATTERN limits it): for deliberate changes of output,
# reviewed with git diff before committing. CI never runs it.
check-bless: $(BUILD)/cigen $(BUILD)/run_tests
	@CIGEN_BLESS=1 CK_RUN_SUITE=golden CIGEN=$(abspath $(BUILD)/cigen) CIGEN_SRCDIR=$(CURDIR) $(BUILD)/run_tests

# sanitizers and valgrind reserve more address space than the bomb cases
# memory limit allows: CIGEN_TEST_NO_ULIMIT lifts it
asan:
	@CIGEN_TEST_NO_ULIMIT=1 $(MAKE) --no-print-directory BUILD=build/asan \
	  OPT='-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all' \
	  EXTRA_LDFLAGS='-fsanitize=address,undefined' check

# the two helper threads of a render (diagrams, streamed writes) under
# ThreadSanitizer: any data race fails the run
tsan:
	@CIGEN_TEST_NO_ULIMIT=1 TSAN_OPTIONS='halt_on_error=1 exitcode=66' $(MAKE) --no-print-directory \
	  BUILD=build/tsan OPT='-O1 -g -fsanitize=thread -fno-omit-frame-pointer' \
	  EXTRA_LDFLAGS='-fsanitize=thread' check

# valgrind follows the runner (CK_FORK=no keeps every test in one process) and
# every cigen it starts; any leak or error fails the run.
memcheck: $(BUILD)/cigen $(BUILD)/run_tests
	@CK_FORK=no CIGEN_TEST_NO_ULIMIT=1 CIGEN=$(abspath $(BUILD)/cigen) CIGEN_SRCDIR=$(CURDIR) \
	  CIGEN_WRAPPER='valgrind -q --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all --error-exitcode=99' \
	  valgrind -q --leak-check=full --show-leak-kinds=all --errors-for-leak-kinds=all \
	  --error-exitcode=99 $(BUILD)/run_tests

install: $(BUILD)/cigen
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(ZSHCOMPDIR)
	install -m 755 $(BUILD)/cigen $(DESTDIR)$(BINDIR)/cigen
	install -m 644 docs/cigen.1 $(DESTDIR)$(MANDIR)/man1/cigen.1
	install -m 644 completion/cigen.bash $(DESTDIR)$(BASHCOMPDIR)/cigen
	install -m 644 completion/_cigen $(DESTDIR)$(ZSHCOMPDIR)/_cigen

uninstall:
	rm -f $(DESTDIR)$(BINDIR)/cigen $(DESTDIR)$(MANDIR)/man1/cigen.1 \
	  $(DESTDIR)$(BASHCOMPDIR)/cigen $(DESTDIR)$(ZSHCOMPDIR)/_cigen

clean:
	rm -rf build

# The release binary: the same objects linked statically (glibc, libyaml,
# jansson, nettle: their Debian -dev packages ship the .a files) and stripped,
# so it runs on any x86-64 Linux with nothing installed.  The .sha256 is what
# scripts/get-cigen.sh pins (docs/releasing.md).
STATIC_LIBS = $(shell $(PKG_CONFIG) --static --libs yaml-0.1 jansson nettle libpcre2-8)
static: $(BUILD)/cigen-static $(BUILD)/cigen-static.sha256
$(BUILD)/cigen-static: $(LIB_OBJ) $(MAIN_OBJ)
	@$(if $(V),,echo "  LINK    $@")
	$(Q)$(CC) $(ALL_CFLAGS) $(ALL_LDFLAGS) -static -s -o $@.tmp $^ $(STATIC_LIBS)
	$(Q)mv $@.tmp $@
$(BUILD)/cigen-static.sha256: $(BUILD)/cigen-static
	$(Q)cd $(BUILD) && sha256sum cigen-static > cigen-static.sha256.tmp && mv cigen-static.sha256.tmp cigen-static.sha256

# The static binary alone in an empty root (tests/static/empty-root.sh), then
# the whole suite against it.
check-static: static $(BUILD)/run_tests
	@tests/static/empty-root.sh $(BUILD)/cigen-static
	@$(MAKE) --no-print-directory check CIGEN=$(BUILD)/cigen-static

# A source tarball of the committed tree (build-aux/dist.sh): same commit,
# same bytes.  distcheck makes it twice, compares, unpacks it and builds and
# checks the outputs there with plain make.
dist:
	@build-aux/dist.sh $(BUILD)
distcheck:
	@build-aux/dist.sh --check $(BUILD)

# The Debian package (debian/): build/cigen_VERSION_ARCH.deb.
deb:
	@build-aux/deb.sh $(BUILD)

# Fuzzing (make fuzz) and the benchmark (make bench) live with their code.
-include tests/fuzz/fuzz.mk
-include tests/bench/bench.mk
