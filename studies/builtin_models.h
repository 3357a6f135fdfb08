// Models mbstudy builds itself (OpenSim documents in memory).
#ifndef MBS_STUDIES_BUILTIN_MODELS_H_
#define MBS_STUDIES_BUILTIN_MODELS_H_

// the .osim text of a built-in model, NULL if there is none of that name
const char* mbs_builtin_model(const char* name);
int mbs_builtin_model_count(void);
const char* mbs_builtin_model_name(int i);
const char* mbs_builtin_model_description(int i);

#endif  // MBS_STUDIES_BUILTIN_MODELS_H_
