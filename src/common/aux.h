/* Keyed storage with destructors, shared by plugins, jobs and handles. */
#ifndef JOBTAP_AUX_H
#define JOBTAP_AUX_H

typedef void (*aux_free_f) (void *arg);
struct aux_item;

/* Rules as in Flux: EINVAL for (!key && !val), (!val && free_fn),
 * (!key && !free_fn).  key + NULL val deletes.  Replacing runs the old
 * destructor.  Anonymous items (NULL key) are only freed with the list. */
int aux_set (struct aux_item **head,
             const char *key,
             void *val,
             aux_free_f free_fn);
void *aux_get (struct aux_item *head, const char *key);
void aux_delete_value (struct aux_item **head, const void *val);
void aux_destroy (struct aux_item **head);

#endif
