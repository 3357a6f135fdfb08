// `mbstudy model info|accel` and `mbstudy simulate` on OpenSim models.
#ifndef MBS_JOBS_MODEL_CMD_H_
#define MBS_JOBS_MODEL_CMD_H_

// argv starts after "model": "info MODEL.osim" or "accel MODEL.osim --states FILE"
int mbs_cmd_model(int argc, char** argv);
// argv starts after "simulate"
int mbs_cmd_simulate(int argc, char** argv);

struct mbs_osim_model;
// An .osim file or a model mbstudy builds itself (double_pendulum, ..., human), as the commands
// take it; messages on stderr prefixed "mbstudy CMD: " (warnings too unless quiet); NULL on
// failure.
struct mbs_osim_model* mbs_cli_load_model(const char* path_or_name, const char* cmd, int quiet);

#endif  // MBS_JOBS_MODEL_CMD_H_
