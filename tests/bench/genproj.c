/* genproj — writes a synthetic cigen project for the benchmark (make bench).
 *
 *   genproj DIR SHARDS
 *
 * The project has the shape of a real binary-build matrix, repeated SHARDS
 * times along a `shard` dimension:
 *
 *   7 dimensions   shard, os, arch, package, python, cuda, variant
 *   dependent sub-trees  linux / windows / macos branches with their own
 *                  python, cuda and arch lists; `variant` only in libtorch
 *                  branches; `docker_image` zipped with `cuda` (manywheel)
 *   filters        a node-level exclude (linux aarch64 has no CUDA), a
 *                  node-level exclude (macOS arm64 has no 3.8), a top-level
 *                  exclude (no windows conda cu116)
 *   overrides      GPU test executor for CUDA, newer xcode for arm64, a
 *                  bigger resource class for libtorch
 *   extra          one extra cell per shard (linux conda 3.11 cu116)
 *   tiers          nightly: all; pr: 4 explicit cells of the first shard
 *   phases         build -> test -> upload (test skipped on macOS arm64,
 *                  where upload requires the build through it)
 *   workflows      ci (per change, pr tier + every cell on request: build
 *                  and test) and nightly (scheduled, every phase)
 *   templates      one per os and phase, 4-8 arguments with placeholders
 *   fragments      header with an anchor holder, executors, commands with
 *                  parameters, hand-written jobs with anchors and merges
 *
 * Per shard: 83 cells and 243 jobs (83 build, 77 test, 83 upload).  The
 * script prints "cells=C jobs=J" (the expected counts) on stdout.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *root;

static void die(const char *what)
{
    fprintf(stderr, "genproj: %s: %s\n", what, strerror(errno));
    exit(2);
}

static void mkdir_p(const char *rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    if (mkdir(path, 0777) != 0 && errno != EEXIST)
        die(path);
}

static FILE *open_out(const char *rel)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", root, rel);
    FILE *f = fopen(path, "w");
    if (!f)
        die(path);
    return f;
}

static void close_out(FILE *f)
{
    if (ferror(f) || fclose(f) != 0)
        die("write");
}

static void write_file(const char *rel, const char *text)
{
    FILE *f = open_out(rel);
    fputs(text, f);
    close_out(f);
}

/* ---- the manifest ----------------------------------------------------- */

static const char manifest[] =
    "# Synthetic benchmark project written by tests/bench/genproj.c.\n"
    "output: config.yml\n"
    "diagrams: diagrams\n"
    "regenerate: cigen generate\n"
    "\n"
    "fragments:\n"
    "  - verbatim-sources/header.yml\n"
    "  - verbatim-sources/executors.yml\n"
    "  - verbatim-sources/commands.yml\n"
    "  - verbatim-sources/setup-jobs.yml\n"
    "  - verbatim-sources/linux-jobs.yml\n"
    "  - verbatim-sources/windows-jobs.yml\n"
    "  - verbatim-sources/macos-jobs.yml\n"
    "\n"
    "trees:\n"
    "  - dimensions/matrix.yml\n"
    "\n"
    "workflows:\n"
    "  ci:\n"
    "    per_change: true\n"
    "    tier: pr\n"
    "    on_request: nightly\n"
    "    branches: {ignore: [gh-pages]}\n"
    "    jobs:\n"
    "      - setup\n"
    "      - lint:\n"
    "          requires: [setup]\n"
    "  nightly:\n"
    "    schedule: \"5 5 * * *\"\n"
    "    branches: [main]\n"
    "    tier: nightly\n"
    "    jobs:\n"
    "      - setup\n"
    "\n"
    "# The big sizes are far beyond CircleCI's 8 MB: this is a benchmark.\n"
    "limits: {max_config_bytes: 100000000000, max_jobs_per_workflow: 100000000, max_jobs: 100000000}\n";

/* ---- the tree ------------------------------------------------------------ */

static void shard_list(FILE *f, long shards)
{
    fputs("[", f);
    for (long i = 1; i <= shards; i++)
        fprintf(f, "%ss%04ld", i > 1 ? ", " : "", i);
    fputs("]", f);
}

static void write_tree(long shards)
{
    FILE *f = open_out("dimensions/matrix.yml");
    fputs("# The binary matrix, repeated along `shard` to reach the benchmark's size.\n"
          "description: Synthetic nightly binaries for Linux, Windows and macOS\n"
          "\n"
          "dimensions: [shard, os, arch, package, python, cuda, variant]\n"
          "\n"
          "job_name:\n"
          "  pattern: \"{{ os }}_{{ arch }}_{{ package }}_{{ python }}_{{ cuda }}_{{ variant }}_{{ shard }}_{{ phase }}\"\n"
          "  replace: {\".\": \"_\"}\n"
          "\n"
          "vars:\n"
          "  build_environment: \"{{ package }} {{ python }} {{ cuda }}\"\n"
          "  artifact: \"{{ package }}-{{ python }}-{{ cuda }}-{{ os }}-{{ arch }}.tar.gz\"\n"
          "  resource_class: xlarge\n"
          "\n"
          "tree:\n"
          "  - os: linux\n"
          "    shard: ", f);
    shard_list(f, shards);
    fputs("\n"
          "    vars:\n"
          "      test_executor: linux-cpu\n"
          "    exclude:\n"
          "      - {arch: aarch64, cuda: \"cu*\"}   # no CUDA on ARM\n"
          "    children:\n"
          "      - package: manywheel\n"
          "        arch: [x86_64, aarch64]\n"
          "        python: [\"3.7\", \"3.8\", \"3.9\", \"3.10\", \"3.11\"]\n"
          "        zip:\n"
          "          cuda: [cpu, cu102, cu113, cu116]\n"
          "          docker_image: [pytorch/manylinux-cpu, pytorch/manylinux-cuda102, pytorch/manylinux-cuda113, pytorch/manylinux-cuda116]\n"
          "      - package: conda\n"
          "        arch: [x86_64, aarch64]\n"
          "        python: [\"3.7\", \"3.8\", \"3.9\", \"3.10\"]\n"
          "        cuda: [cpu, cu102, cu113]\n"
          "        vars:\n"
          "          docker_image: pytorch/conda-builder\n"
          "      - package: libtorch\n"
          "        arch: x86_64\n"
          "        python: \"3.9\"\n"
          "        cuda: [cpu, cu113]\n"
          "        variant: [shared-with-deps, shared-without-deps, static-with-deps, static-without-deps]\n"
          "        vars:\n"
          "          docker_image: pytorch/libtorch-builder\n"
          "          build_environment: \"{{ package }} {{ python }} {{ cuda }} {{ variant }}\"\n"
          "    extra:   # a one-off: conda 3.11 with CUDA 11.6 on x86_64 only\n"
          "      - {package: conda, arch: x86_64, python: \"3.11\", cuda: cu116, vars: {docker_image: pytorch/conda-builder}}\n"
          "\n"
          "  - os: windows\n"
          "    shard: ", f);
    shard_list(f, shards);
    fputs("\n"
          "    arch: x86_64\n"
          "    vars:\n"
          "      vs_version: \"2019\"\n"
          "      test_executor: windows-cpu\n"
          "    children:\n"
          "      - package: [wheel, conda]\n"
          "        python: [\"3.8\", \"3.9\", \"3.10\"]\n"
          "        cuda: [cpu, cu113, cu116]\n"
          "      - package: libtorch\n"
          "        python: \"3.9\"\n"
          "        cuda: [cpu, cu113]\n"
          "        variant: [debug, release]\n"
          "        vars:\n"
          "          build_environment: \"{{ package }} {{ python }} {{ cuda }} {{ variant }}\"\n"
          "\n"
          "  - os: macos\n"
          "    shard: ", f);
    shard_list(f, shards);
    fputs("\n"
          "    arch: [x86_64, arm64]\n"
          "    cuda: cpu\n"
          "    vars:\n"
          "      xcode: \"12.5.1\"\n"
          "    exclude:\n"
          "      - {arch: arm64, python: \"3.8\"}\n"
          "    children:\n"
          "      - package: [wheel, conda]\n"
          "        python: [\"3.8\", \"3.9\", \"3.10\", \"3.11\"]\n"
          "\n"
          "exclude:\n"
          "  - {os: windows, package: conda, cuda: cu116}\n"
          "\n"
          "overrides:\n"
          "  # CUDA binaries are tested on a GPU machine\n"
          "  - when: {os: [linux, windows], cuda: \"cu*\"}\n"
          "    vars: {test_executor: \"{{ os }}-gpu\"}\n"
          "  # Apple silicon needs a newer SDK\n"
          "  - when: {os: macos, arch: arm64}\n"
          "    vars: {xcode: \"14.2\"}\n"
          "  # libtorch links for a long time\n"
          "  - when: {package: libtorch}\n"
          "    vars: {resource_class: 2xlarge}\n"
          "\n"
          "tiers:\n"
          "  nightly: all\n"
          "  pr:\n"
          "    cells:\n"
          "      - {shard: s0001, os: linux, arch: x86_64, package: manywheel, python: \"3.9\", cuda: cu113}\n"
          "      - {shard: s0001, os: linux, package: conda, python: \"3.8\", cuda: cpu, arch: x86_64}\n"
          "      - {shard: s0001, os: windows, package: libtorch, cuda: cpu, variant: release}\n"
          "      - {shard: s0001, os: macos, package: wheel, arch: arm64, python: \"3.11\"}\n"
          "\n"
          "phases:\n"
          "  build:\n"
          "    template: \"templates/{{ os }}_build.yml\"\n"
          "    requires: [setup]\n"
          "    workflows: [nightly, ci]\n"
          "  test:\n"
          "    template: \"templates/{{ os }}_test.yml\"\n"
          "    requires: [build]\n"
          "    skip: {os: macos, arch: arm64}   # no arm64 test runners\n"
          "    workflows: [nightly, ci]\n"
          "  upload:\n"
          "    template: \"templates/{{ os }}_upload.yml\"\n"
          "    requires: [test]\n"
          "    workflows: [nightly]\n", f);
    close_out(f);
}

/* ---- templates ------------------------------------------------------------ */

static const char *const templates[][2] = {
    {"templates/linux_build.yml",
     "# One Linux build: runs in the package's docker image and leaves the package\n"
     "# in the workspace for the test and upload jobs.\n"
     "linux_build:\n"
     "  build_environment: \"{{ build_environment }}\"\n"
     "  variant: \"{{ variant? }}\"\n"
     "  docker_image: \"{{ docker_image }}\"\n"
     "  resource_class: \"{{ resource_class }}\"\n"
     "  arch: \"{{ arch }}\"\n"
     "  shard: \"{{ shard }}\"\n"
     "  artifact: \"{{ artifact }}\"\n"
     "  on_request: \"{{ on_request }}\"\n"},
    {"templates/linux_test.yml",
     "# One Linux test, on a GPU machine for CUDA builds.\n"
     "linux_test:\n"
     "  build_environment: \"{{ build_environment }}\"\n"
     "  variant: \"{{ variant? }}\"\n"
     "  docker_image: \"{{ docker_image }}\"\n"
     "  executor: \"{{ test_executor }}\"\n"
     "  shard: \"{{ shard }}\"\n"
     "  on_request: \"{{ on_request }}\"\n"},
    {"templates/linux_upload.yml",
     "# One Linux upload; the credentials come from the context.\n"
     "linux_upload:\n"
     "  build_environment: \"{{ build_environment }}\"\n"
     "  variant: \"{{ variant? }}\"\n"
     "  artifact: \"{{ artifact }}\"\n"
     "  context: org-member\n"},
    {"templates/windows_build.yml",
     "# One Windows build with Visual Studio.\n"
     "windows_build:\n"
     "  build_environment: \"{{ build_environment }}\"\n"
     "  variant: \"{{ variant? }}\"\n"
     "  vs_version: \"{{ vs_version }}\"\n"
     "  shard: \"{{ shard }}\"\n"
     "  artifact: \"{{ artifact }}\"\n"
     "  on_request: \"{{ on_request }}\"\n"},
    {"templates/windows_test.yml",
     "# One Windows test.\n"
     "windows_test:\n"
     "  build_environment: \"{{ build_environment }}\"\n"
     "  variant: \"{{ variant? }}\"\n"
     "  executor: \"{{ test_executor }}\"\n"
     "  shard: \"{{ shard }}\"\n"
     "  on_request: \"{{ on_request }}\"\n"},
    {"templates/windows_upload.yml",
     "# One Windows upload; the credentials come from the context.\n"
     "windows_upload:\n"
     "  build_environment: \"{{ build_environment }}\"\n"
     "  variant: \"{{ variant? }}\"\n"
     "  artifact: \"{{ artifact }}\"\n"
     "  context: org-member\n"},
    {"templates/macos_build.yml",
     "# One macOS build.\n"
     "macos_build:\n"
     "  build_environment: \"{{ build_environment }}\"\n"
     "  xcode: \"{{ xcode }}\"\n"
     "  arch: \"{{ arch }}\"\n"
     "  shard: \"{{ shard }}\"\n"
     "  artifact: \"{{ artifact }}\"\n"
     "  on_request: \"{{ on_request }}\"\n"},
    {"templates/macos_test.yml",
     "# One macOS test (x86_64 only).\n"
     "macos_test:\n"
     "  build_environment: \"{{ build_environment }}\"\n"
     "  xcode: \"{{ xcode }}\"\n"
     "  shard: \"{{ shard }}\"\n"
     "  on_request: \"{{ on_request }}\"\n"},
    {"templates/macos_upload.yml",
     "# One macOS upload; the credentials come from the context.\n"
     "macos_upload:\n"
     "  build_environment: \"{{ build_environment }}\"\n"
     "  artifact: \"{{ artifact }}\"\n"
     "  arch: \"{{ arch }}\"\n"
     "  context: org-member\n"},
};

/* ---- fragments -------------------------------------------------------------- */

static const char header_yml[] =
    "# CircleCI configuration of the synthetic benchmark project.\n"
    "version: 2.1\n"
    "\n"
    "# An anchor holder: CircleCI ignores top-level keys it does not know.\n"
    "defaults: &defaults\n"
    "  working_directory: ~/project\n"
    "  environment:\n"
    "    LANG: C.UTF-8\n"
    "    PYTHONUNBUFFERED: \"1\"\n";

static const char executors_yml[] =
    "# Where jobs run.\n"
    "executors:\n"
    "  linux-small:\n"
    "    docker:\n"
    "      - image: cimg/base:2023.01\n"
    "    resource_class: small\n"
    "  linux-cpu:\n"
    "    machine:\n"
    "      image: ubuntu-2004:2023.01.1\n"
    "    resource_class: medium\n"
    "  linux-gpu:\n"
    "    machine:\n"
    "      image: linux-cuda-11:2023.02.1\n"
    "    resource_class: gpu.nvidia.small\n"
    "  windows-cpu:\n"
    "    machine:\n"
    "      image: windows-server-2019-vs2019:stable\n"
    "    resource_class: windows.medium\n"
    "    shell: bash.exe\n"
    "  windows-gpu:\n"
    "    machine:\n"
    "      image: windows-server-2019-nvidia:stable\n"
    "    resource_class: windows.gpu.nvidia.medium\n"
    "    shell: bash.exe\n"
    "  macos:\n"
    "    parameters:\n"
    "      xcode:\n"
    "        type: string\n"
    "    macos:\n"
    "      xcode: << parameters.xcode >>\n"
    "    resource_class: macos.m1.medium.gen1\n";

static const char commands_yml[] =
    "# Steps the binary jobs share; each delegates to a script.\n"
    "commands:\n"
    "  attach_scripts:\n"
    "    description: Attach the workspace the setup job filled.\n"
    "    steps:\n"
    "      - attach_workspace:\n"
    "          at: ~/workspace\n"
    "\n"
    "  should_run_job:\n"
    "    description: >-\n"
    "      On a pull request, end this job early unless it runs by default or the\n"
    "      commit message asks for it.\n"
    "    parameters:\n"
    "      on_request:\n"
    "        type: boolean\n"
    "        default: false\n"
    "    steps:\n"
    "      - run:\n"
    "          name: Should this job run?\n"
    "          command: ON_REQUEST=<< parameters.on_request >> ~/workspace/scripts/should_run_job.sh\n"
    "\n"
    "  populate_env:\n"
    "    description: Turn BUILD_ENVIRONMENT into the env file the scripts source.\n"
    "    parameters:\n"
    "      shard:\n"
    "        type: string\n"
    "    steps:\n"
    "      - run:\n"
    "          name: Describe the configuration\n"
    "          command: SHARD=<< parameters.shard >> ~/workspace/scripts/populate_env.sh\n"
    "\n"
    "  prepare:\n"
    "    description: The first steps of every build and test job.\n"
    "    parameters:\n"
    "      on_request:\n"
    "        type: boolean\n"
    "        default: false\n"
    "      shard:\n"
    "        type: string\n"
    "    steps:\n"
    "      - attach_scripts\n"
    "      - should_run_job:\n"
    "          on_request: << parameters.on_request >>\n"
    "      - checkout\n"
    "      - populate_env:\n"
    "          shard: << parameters.shard >>\n";

static const char setup_yml[] =
    "jobs:\n"
    "  setup:\n"
    "    description: Save the commit message and persist the scripts into the workspace.\n"
    "    executor: linux-small\n"
    "    steps:\n"
    "      - checkout\n"
    "      - run: mkdir -p ~/workspace && cp -r scripts ~/workspace/\n"
    "      - persist_to_workspace:\n"
    "          root: ~/workspace\n"
    "          paths: [scripts]\n"
    "\n"
    "  lint:\n"
    "    executor: linux-small\n"
    "    steps:\n"
    "      - attach_scripts\n"
    "      - checkout\n"
    "      - run: ./regenerate.sh --check\n";

static const char linux_jobs_yml[] =
    "# Anchors are local to a fragment: this holder is copied as written.\n"
    "linux_defaults: &linux_defaults\n"
    "  working_directory: ~/project\n"
    "  environment: &common_env\n"
    "    LANG: C.UTF-8\n"
    "    PYTHONUNBUFFERED: \"1\"\n"
    "\n"
    "jobs:\n"
    "  linux_build:\n"
    "    <<: *linux_defaults\n"
    "    description: Build one Linux package inside its docker image.\n"
    "    parameters: &linux_parameters\n"
    "      build_environment:\n"
    "        type: string\n"
    "        description: '\"<package> <python> <cuda> [<variant>]\"'\n"
    "      variant:\n"
    "        type: string\n"
    "        default: \"\"\n"
    "      docker_image:\n"
    "        type: string\n"
    "      shard:\n"
    "        type: string\n"
    "      on_request:\n"
    "        type: boolean\n"
    "        default: false\n"
    "      resource_class: {type: string, default: xlarge}\n"
    "      arch: {type: string, default: x86_64}\n"
    "      artifact: {type: string, default: \"\"}\n"
    "    docker:\n"
    "      - image: << parameters.docker_image >>\n"
    "    resource_class: << parameters.resource_class >>\n"
    "    environment: &linux_environment\n"
    "      <<: *common_env\n"
    "      BUILD_ENVIRONMENT: << parameters.build_environment >>\n"
    "      VARIANT: << parameters.variant >>\n"
    "      DOCKER_IMAGE: << parameters.docker_image >>\n"
    "    steps:\n"
    "      - prepare:\n"
    "          on_request: << parameters.on_request >>\n"
    "          shard: << parameters.shard >>\n"
    "      - run:\n"
    "          name: Build\n"
    "          no_output_timeout: 1h\n"
    "          command: ~/workspace/scripts/linux_build.sh\n"
    "      - persist_to_workspace:\n"
    "          root: /\n"
    "          paths:\n"
    "            - final_pkgs\n"
    "\n"
    "  linux_test:\n"
    "    description: Install the built package inside its docker image and test it.\n"
    "    parameters:\n"
    "      <<: *linux_parameters\n"
    "      executor:\n"
    "        type: executor\n"
    "        default: linux-cpu\n"
    "    executor: << parameters.executor >>\n"
    "    environment: *linux_environment\n"
    "    steps:\n"
    "      - prepare:\n"
    "          on_request: << parameters.on_request >>\n"
    "          shard: << parameters.shard >>\n"
    "      - run:\n"
    "          name: Test\n"
    "          no_output_timeout: 1h\n"
    "          command: ~/workspace/scripts/linux_test.sh\n"
    "\n"
    "  linux_upload:\n"
    "    description: Upload one Linux package (credentials from the context).\n"
    "    parameters:\n"
    "      build_environment: {type: string}\n"
    "      variant: {type: string, default: \"\"}\n"
    "      artifact: {type: string}\n"
    "    executor: linux-small\n"
    "    steps:\n"
    "      - attach_scripts\n"
    "      - run:\n"
    "          name: Upload\n"
    "          command: ARTIFACT=<< parameters.artifact >> ~/workspace/scripts/upload.sh\n";

static const char windows_jobs_yml[] =
    "jobs:\n"
    "  windows_build:\n"
    "    description: Build one Windows package.\n"
    "    parameters: &windows_parameters\n"
    "      build_environment: {type: string}\n"
    "      variant: {type: string, default: \"\"}\n"
    "      vs_version: {type: string, default: \"2019\"}\n"
    "      shard: {type: string}\n"
    "      artifact: {type: string}\n"
    "      on_request: {type: boolean, default: false}\n"
    "    executor: windows-cpu\n"
    "    environment:\n"
    "      BUILD_ENVIRONMENT: << parameters.build_environment >>\n"
    "      VC_YEAR: << parameters.vs_version >>\n"
    "    steps:\n"
    "      - prepare:\n"
    "          on_request: << parameters.on_request >>\n"
    "          shard: << parameters.shard >>\n"
    "      - run:\n"
    "          name: Build\n"
    "          no_output_timeout: 2h\n"
    "          command: ~/workspace/scripts/windows_build.sh\n"
    "\n"
    "  windows_test:\n"
    "    description: Test one Windows package.\n"
    "    parameters:\n"
    "      build_environment: {type: string}\n"
    "      variant: {type: string, default: \"\"}\n"
    "      shard: {type: string}\n"
    "      executor: {type: executor, default: windows-cpu}\n"
    "      on_request: {type: boolean, default: false}\n"
    "    executor: << parameters.executor >>\n"
    "    steps:\n"
    "      - prepare:\n"
    "          on_request: << parameters.on_request >>\n"
    "          shard: << parameters.shard >>\n"
    "      - run: ~/workspace/scripts/windows_test.sh\n"
    "\n"
    "  windows_upload:\n"
    "    parameters:\n"
    "      build_environment: {type: string}\n"
    "      variant: {type: string, default: \"\"}\n"
    "      artifact: {type: string}\n"
    "    executor: linux-small\n"
    "    steps:\n"
    "      - attach_scripts\n"
    "      - run: ARTIFACT=<< parameters.artifact >> ~/workspace/scripts/upload.sh\n";

static const char macos_jobs_yml[] =
    "jobs:\n"
    "  macos_build:\n"
    "    <<: &macos_defaults\n"
    "      working_directory: ~/project\n"
    "      shell: /bin/bash --login -eo pipefail\n"
    "    description: Build one macOS package.\n"
    "    parameters:\n"
    "      build_environment: {type: string}\n"
    "      xcode: {type: string}\n"
    "      arch: {type: string}\n"
    "      shard: {type: string}\n"
    "      artifact: {type: string}\n"
    "      on_request: {type: boolean, default: false}\n"
    "    executor:\n"
    "      name: macos\n"
    "      xcode: << parameters.xcode >>\n"
    "    steps:\n"
    "      - prepare:\n"
    "          on_request: << parameters.on_request >>\n"
    "          shard: << parameters.shard >>\n"
    "      - run: ARCH=<< parameters.arch >> ~/workspace/scripts/macos_build.sh\n"
    "\n"
    "  macos_test:\n"
    "    <<: *macos_defaults\n"
    "    parameters:\n"
    "      build_environment: {type: string}\n"
    "      xcode: {type: string}\n"
    "      shard: {type: string}\n"
    "      on_request: {type: boolean, default: false}\n"
    "    executor:\n"
    "      name: macos\n"
    "      xcode: << parameters.xcode >>\n"
    "    steps:\n"
    "      - prepare:\n"
    "          on_request: << parameters.on_request >>\n"
    "          shard: << parameters.shard >>\n"
    "      - run: ~/workspace/scripts/macos_test.sh\n"
    "\n"
    "  macos_upload:\n"
    "    parameters:\n"
    "      build_environment: {type: string}\n"
    "      artifact: {type: string}\n"
    "      arch: {type: string}\n"
    "    executor: linux-small\n"
    "    steps:\n"
    "      - attach_scripts\n"
    "      - run: ARTIFACT=<< parameters.artifact >> ~/workspace/scripts/upload.sh\n";

int main(int argc, char **argv)
{
    if (argc != 3) {
        fputs("usage: genproj DIR SHARDS\n", stderr);
        return 2;
    }
    root = argv[1];
    char *end;
    long shards = strtol(argv[2], &end, 10);
    if (*end || shards < 1 || shards > 9999) {
        fputs("genproj: SHARDS must be 1..9999\n", stderr);
        return 2;
    }
    if (mkdir(root, 0777) != 0 && errno != EEXIST)
        die(root);
    mkdir_p("dimensions");
    mkdir_p("templates");
    mkdir_p("verbatim-sources");
    write_file("cigen.yml", manifest);
    write_tree(shards);
    for (size_t i = 0; i < sizeof templates / sizeof templates[0]; i++)
        write_file(templates[i][0], templates[i][1]);
    write_file("verbatim-sources/header.yml", header_yml);
    write_file("verbatim-sources/executors.yml", executors_yml);
    write_file("verbatim-sources/commands.yml", commands_yml);
    write_file("verbatim-sources/setup-jobs.yml", setup_yml);
    write_file("verbatim-sources/linux-jobs.yml", linux_jobs_yml);
    write_file("verbatim-sources/windows-jobs.yml", windows_jobs_yml);
    write_file("verbatim-sources/macos-jobs.yml", macos_jobs_yml);
    /* linux: manywheel 2*5*4 - 15 + conda 2*4*3 - 8 + libtorch 2*4 + 1 extra
     * = 25 + 16 + 8 + 1 = 50; windows: 2*3*3 - 3 + 2*2 = 19; macos: 2*2*4 - 2 = 14;
     * 6 macOS arm64 cells have no test job. */
    long cells = 83 * shards, jobs = (83 + 77 + 83) * shards;
    printf("cells=%ld jobs=%ld\n", cells, jobs);
    return 0;
}
