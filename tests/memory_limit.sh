#!/bin/sh
# usage: memory_limit.sh MIB COMMAND [ARG...]: run COMMAND with its address space limited to
# MIB mebibytes (ulimit -v, inherited by the processes it starts)
limit=$1
shift
ulimit -v $((limit * 1024)) || exit 1
exec "$@"
