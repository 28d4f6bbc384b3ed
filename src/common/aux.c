#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "aux.h"

struct aux_item {
    char *key;
    void *val;
    aux_free_f free_fn;
    struct aux_item *next;
};

static void item_destroy (struct aux_item *item)
{
    if (item) {
        int saved_errno = errno;
        if (item->free_fn && item->val)
            item->free_fn (item->val);
        free (item->key);
        free (item);
        errno = saved_errno;
    }
}

static void delete_key (struct aux_item **head, const char *key)
{
    for (struct aux_item **pp = head; *pp; pp = &(*pp)->next) {
        if ((*pp)->key && strcmp ((*pp)->key, key) == 0) {
            struct aux_item *item = *pp;
            *pp = item->next;
            item_destroy (item);
            return;
        }
    }
}

int aux_set (struct aux_item **head,
             const char *key,
             void *val,
             aux_free_f free_fn)
{
    struct aux_item *item;

    if (!head || (!key && !val) || (!val && free_fn) || (!key && !free_fn)) {
        errno = EINVAL;
        return -1;
    }
    if (key)
        delete_key (head, key);
    if (!val)
        return 0;
    if (!(item = calloc (1, sizeof (*item))))
        return -1;
    if (key && !(item->key = strdup (key))) {
        free (item);
        return -1;
    }
    item->val = val;
    item->free_fn = free_fn;
    if (key) {
        item->next = *head;
        *head = item;
    }
    else {
        struct aux_item **pp = head;
        while (*pp)
            pp = &(*pp)->next;
        *pp = item;
    }
    return 0;
}

void *aux_get (struct aux_item *head, const char *key)
{
    if (!key) {
        errno = EINVAL;
        return NULL;
    }
    for (struct aux_item *item = head; item; item = item->next) {
        if (item->key && strcmp (item->key, key) == 0)
            return item->val;
    }
    errno = ENOENT;
    return NULL;
}

void aux_delete_value (struct aux_item **head, const void *val)
{
    if (!head || !val)
        return;
    for (struct aux_item **pp = head; *pp; pp = &(*pp)->next) {
        if ((*pp)->val == val) {
            struct aux_item *item = *pp;
            *pp = item->next;
            item_destroy (item);
            return;
        }
    }
}

void aux_destroy (struct aux_item **head)
{
    /* Destructors may touch the list (e.g. delete another value), so
     * unlink each item before running its destructor. */
    while (head && *head) {
        struct aux_item *item = *head;
        *head = item->next;
        item_destroy (item);
    }
}
