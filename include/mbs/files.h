// Folders: made with their parents, removed with their contents.
#ifndef MBS_FILES_H_
#define MBS_FILES_H_

#ifdef __cplusplus
extern "C" {
#endif

// mkdir -p: the folder and the folders on its way (mode 0777 less the umask); 0, or -1 with
// errno
int mbs_make_dirs(const char* path);
// rm -r: the folder and everything below it (links not followed); 0, or -1 with errno
int mbs_remove_tree(const char* path);

#ifdef __cplusplus
}
#endif

#endif  // MBS_FILES_H_
