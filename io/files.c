// Folders (files.h).
#define _XOPEN_SOURCE 700
#include "mbs/files.h"

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int mbs_make_dirs(const char* path) {
  const size_t n = strlen(path);
  char* p = malloc(n + 1);
  if (!p) return -1;
  memcpy(p, path, n + 1);
  for (char* c = p + 1; *c; c++)
    if (*c == '/') {
      *c = 0;
      if (mkdir(p, 0777) && errno != EEXIST) {
        free(p);
        return -1;
      }
      *c = '/';
    }
  const int rc = mkdir(p, 0777) && errno != EEXIST ? -1 : 0;
  free(p);
  return rc;
}

static int remove_entry(const char* path, const struct stat* sb, int flag, struct FTW* ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(path);
}

int mbs_remove_tree(const char* path) {
  return nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}
