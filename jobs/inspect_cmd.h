// `mbstudy inspect` and `mbstudy export`: reading a study's result file.
#ifndef MBS_JOBS_INSPECT_CMD_H_
#define MBS_JOBS_INSPECT_CMD_H_

// argv starts after the command name
int mbs_cmd_inspect(int argc, char** argv);
int mbs_cmd_export(int argc, char** argv);

#endif  // MBS_JOBS_INSPECT_CMD_H_
