/* noinit.so: no flux_plugin_init at all (loading still succeeds). */
int noinit_marker (void);
int noinit_marker (void)
{
    return 42;
}
