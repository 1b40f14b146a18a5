#pragma once
// <slurm/spank.h> is a C header without C++ guards around every declaration.
extern "C" {
#include <slurm/slurm_version.h>
#include <slurm/spank.h>
}
