# Runs CMD (a ;-list) and passes when it exits non-zero with output matching REGEX.
execute_process(COMMAND ${CMD} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message("exit code ${rc}\n${out}${err}")
if(rc EQUAL 0)
  message(FATAL_ERROR "the command succeeded; it should have failed")
endif()
if(NOT "${out}${err}" MATCHES "${REGEX}")
  message(FATAL_ERROR "the message does not match '${REGEX}'")
endif()
