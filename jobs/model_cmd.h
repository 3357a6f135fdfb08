// `mbstudy model info|accel` and `mbstudy simulate` on OpenSim models.
#ifndef MBS_JOBS_MODEL_CMD_H_
#define MBS_JOBS_MODEL_CMD_H_

// argv starts after "model": "info MODEL.osim" or "accel MODEL.osim --states FILE"
int mbs_cmd_model(int argc, char** argv);
// argv starts after "simulate"
int mbs_cmd_simulate(int argc, char** argv);

#endif  // MBS_JOBS_MODEL_CMD_H_
