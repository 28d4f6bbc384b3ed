#include "host.h"

const char *jobtap_runtime_version (void)
{
    return "0.1.0";
}
