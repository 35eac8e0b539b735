/* paths — every path of a project, checked as text and resolved beneath the
 * project folder.
 *
 * A path a source names (an output, a fragment, a template, ...) is checked
 * once as text (cg_check_project_path: relative, no "..", no "\", no ".git"
 * component) and then opened only through cg_open_beneath(), which resolves
 * it beneath the project folder's descriptor: a symbolic link may point
 * elsewhere inside the project, never out of it (EXDEV), and a folder
 * swapped for a link while cigen runs cannot lead it out either, since no
 * path is resolved twice.  The kernel does the resolving where it can
 * (openat2 with RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS); elsewhere a walk
 * one component at a time with O_NOFOLLOW does the same.
 */
#ifndef CIGEN_PATHS_H
#define CIGEN_PATHS_H

#include <stdbool.h>
#include <sys/types.h>

#include "base/diag.h"
#include "base/strbuf.h"

/* Checks that a path from a source file is relative and stays in the
 * project: no absolute path, no "..", no empty components, no backslash,
 * no control character, nothing inside git's folder ".git". */
int cg_check_project_path(const char *path, const cg_pos *pos, const char *what, cg_error *err);

/* Whether two project paths name the same file ("./a/b.yml" and "a/b.yml"). */
bool cg_path_same(const char *a, const char *b);
/* A project path's one spelling: "./a//b.yml" is "a/b.yml". */
void cg_path_normalize(const char *path, cg_strbuf *out);
/* Whether path is dir or lies under it ("d/x.dot" in "./d"). */
bool cg_path_within(const char *path, const char *dir);

/* Opens rel beneath the folder open as dirfd (open(2) flags and mode; the
 * descriptor is close-on-exec).  Returns the descriptor, or -1 and errno:
 * EXDEV when the path (through "..", an absolute or a relative symbolic
 * link) leads out of that folder, ELOOP for a last component that is a
 * link when flags hold O_NOFOLLOW, else what open(2) says. */
int cg_open_beneath(int dirfd, const char *rel, int flags, mode_t mode);

/* The same without the kernel's help (the O_NOFOLLOW walk cg_open_beneath
 * falls back on where openat2 is missing); for tests. */
int cg_open_beneath_walk(int dirfd, const char *rel, int flags, mode_t mode);

/* A file's identity (device and inode), to tell whether two paths name the
 * same file whatever links they pass through. */
typedef struct cg_file_id {
    dev_t dev;
    ino_t ino;
} cg_file_id;

/* The identity of root/rel resolved beneath root: 0, or 1 when it cannot
 * be resolved (missing, outside). */
int cg_file_id_of(const char *root, const char *rel, cg_file_id *id);

/* Whether the folder open as dirfd (beneath the folder open as rootfd) is,
 * or lies inside, git's own folder: a folder named ".git" (any case) or the
 * git dir a ".git" file of the project names (a worktree's).  Returns 1 and
 * *where (malloc'd: the folder's path relative to the project), 0 when it is
 * not, -1 and errno when the folder cannot be placed (EXDEV: not beneath). */
int cg_dir_in_git(int rootfd, int dirfd, char **where);

/* Whether the folder at the canonical absolute path `root` (cg_realdir) is,
 * or lies inside, a repository's git folder: one of its folders is named
 * ".git" (any case), or is one as git tells one (git's discovery: a HEAD
 * file with objects/ and refs/ folders, or with a commondir file: a
 * worktree's, a submodule's, a bare repository, a --separate-git-dir).
 * Returns 1 and *where (malloc'd: that git folder's name), or 0. */
int cg_root_in_git(const char *root, char **where);

#endif
