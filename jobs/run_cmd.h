// `mbstudy run`: run a study.
#ifndef MBS_JOBS_RUN_CMD_H_
#define MBS_JOBS_RUN_CMD_H_

// argv starts after "run"
int mbs_cmd_run(int argc, char** argv);
// argv starts after "merge": the result file of an array job's parts from their journals
int mbs_cmd_merge(int argc, char** argv);

#endif  // MBS_JOBS_RUN_CMD_H_
