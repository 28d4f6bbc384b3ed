/* undefined.so: references a symbol nothing defines (RTLD_NOW fails). */
extern int slurm_jobtap_test_no_such_symbol (void);

int flux_plugin_init (void *p)
{
    (void)p;
    return slurm_jobtap_test_no_such_symbol ();
}
