#pragma once
#include <cooperative_groups.h>  // inclusive_scan and exclusive_scan live there in the emulator
