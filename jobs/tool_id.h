// `mbstudy inverse-dynamics`: OpenSim's InverseDynamicsTool from command-line flags (the same
// computation as `mbstudy run-tool` on an InverseDynamicsTool setup, jobs/tool_id.c).
#ifndef MBS_JOBS_TOOL_ID_H_
#define MBS_JOBS_TOOL_ID_H_

// argv starts after "inverse-dynamics"; 0 on success, 1 on failure, 2 for bad arguments
int mbs_cmd_inverse_dynamics(int argc, char** argv);

#endif  // MBS_JOBS_TOOL_ID_H_
