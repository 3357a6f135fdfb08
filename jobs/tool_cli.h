// `mbstudy inverse-kinematics`, `mbstudy scale` and `mbstudy analyze`: OpenSim's
// InverseKinematicsTool, ScaleTool and AnalyzeTool from command-line flags (jobs/tool_cli.c).
// Each builds the setup document OpenSim would read and runs it with the same tool function as
// `mbstudy run-tool` (jobs/tool_ik.c, tool_scale.c, tool_analyze.c).
#ifndef MBS_JOBS_TOOL_CLI_H_
#define MBS_JOBS_TOOL_CLI_H_

// argv starts after the command's name; 0 on success, 1 on failure, 2 for bad arguments
int mbs_cmd_inverse_kinematics(int argc, char** argv);
int mbs_cmd_scale(int argc, char** argv);
int mbs_cmd_analyze(int argc, char** argv);

#endif  // MBS_JOBS_TOOL_CLI_H_
