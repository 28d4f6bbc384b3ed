#include "tap.h"
int main (void) { done_testing (); }
