// `mbstudy submit`, `mbstudy status` and `mbstudy cancel`: a study on a cluster through Slurm
// or PBS (submit_cmd.c).
#ifndef MBS_JOBS_SUBMIT_CMD_H_
#define MBS_JOBS_SUBMIT_CMD_H_

// argv starts after the command name
int mbs_cmd_submit(int argc, char** argv);
int mbs_cmd_status(int argc, char** argv);
int mbs_cmd_cancel(int argc, char** argv);

#endif  // MBS_JOBS_SUBMIT_CMD_H_
