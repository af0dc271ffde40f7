#include "CMHDShim.h"
