/* aux.c: keyed storage with destructors: the EINVAL rules, replacing and
 * deleting by key or by value, anonymous items, and destroying the list
 * (destructors that touch it, errno kept). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aux.h"
#include "tap.h"

static char destroyed[256]; /* names of destroyed values, in order */

static void destroy (void *arg)
{
    if (destroyed[0])
        strncat (destroyed, " ", sizeof (destroyed) - strlen (destroyed) - 1);
    strncat (destroyed, (char *)arg,
             sizeof (destroyed) - strlen (destroyed) - 1);
    errno = EIO; /* must not leak to the caller */
}

static struct aux_item *list;
static char *killer_victim;

/* Destroying this value deletes another one from the same list. */
static void destroy_and_delete (void *arg)
{
    destroy (arg);
    aux_delete_value (&list, killer_victim);
}

static void test_rules (void)
{
    struct aux_item *head = NULL;
    char v[] = "v";

    errno = 0;
    ok (aux_set (NULL, "k", v, NULL) == -1 && errno == EINVAL,
        "a NULL list is EINVAL");
    errno = 0;
    ok (aux_set (&head, NULL, NULL, NULL) == -1 && errno == EINVAL,
        "no key and no value is EINVAL");
    errno = 0;
    ok (aux_set (&head, "k", NULL, destroy) == -1 && errno == EINVAL,
        "a destructor without a value is EINVAL");
    errno = 0;
    ok (aux_set (&head, NULL, v, NULL) == -1 && errno == EINVAL,
        "an anonymous value without a destructor is EINVAL");
    ok (head == NULL, "nothing was added");
    errno = 0;
    ok (aux_get (head, NULL) == NULL && errno == EINVAL,
        "aux_get of a NULL key is EINVAL");
    errno = 0;
    ok (aux_get (head, "k") == NULL && errno == ENOENT,
        "aux_get of a missing key is ENOENT");
    ok (aux_set (&head, "k", NULL, NULL) == 0,
        "deleting a key that is not there is no error");
}

static void test_set_get (void)
{
    struct aux_item *head = NULL;
    char a[] = "a", b[] = "b", c[] = "c", plain[] = "plain";

    destroyed[0] = '\0';
    ok (aux_set (&head, "x", a, destroy) == 0, "aux_set x=a works");
    ok (aux_set (&head, "y", plain, NULL) == 0,
        "a value without destructor works");
    ok (aux_get (head, "x") == a && aux_get (head, "y") == plain,
        "aux_get gives each value");
    errno = 0;
    ok (aux_set (&head, "x", b, destroy) == 0 && errno == 0,
        "replacing x works and keeps errno");
    is (destroyed, "a", "the old value's destructor ran");
    ok (aux_get (head, "x") == b, "x is the new value");
    ok (aux_set (&head, "x", NULL, NULL) == 0, "x set to NULL");
    is (destroyed, "a b", "deleting by key runs the destructor");
    ok (aux_get (head, "x") == NULL, "x is gone");
    ok (aux_set (&head, "y", NULL, NULL) == 0 && aux_get (head, "y") == NULL,
        "a value without destructor is deleted too");

    ok (aux_set (&head, NULL, c, destroy) == 0,
        "an anonymous value with a destructor works");
    ok (aux_set (&head, "z", a, destroy) == 0, "z=a works");
    aux_delete_value (&head, a);
    is (destroyed, "a b a", "aux_delete_value runs the value's destructor");
    ok (aux_get (head, "z") == NULL, "its key is gone");
    aux_delete_value (&head, plain);
    aux_delete_value (&head, NULL);
    aux_delete_value (NULL, a);
    is (destroyed, "a b a", "deleting an absent or NULL value does nothing");
    aux_delete_value (&head, c);
    is (destroyed, "a b a c", "an anonymous value can be deleted by value");
    ok (head == NULL, "the list is empty");
}

static void test_destroy (void)
{
    char k1[] = "k1", k2[] = "k2", anon1[] = "anon1", anon2[] = "anon2";
    char victim[] = "victim", killer[] = "killer";

    list = NULL;
    destroyed[0] = '\0';
    if (aux_set (&list, NULL, anon1, destroy) < 0
        || aux_set (&list, "k1", k1, destroy) < 0
        || aux_set (&list, "k2", k2, destroy) < 0
        || aux_set (&list, NULL, anon2, destroy) < 0)
        bail_out ("aux_set failed");
    errno = 0;
    aux_destroy (&list);
    is (destroyed, "k2 k1 anon1 anon2",
        "aux_destroy runs every destructor: keyed newest first, then "
        "anonymous in order");
    ok (list == NULL && errno == 0, "the list is empty and errno kept");
    aux_destroy (&list);
    aux_destroy (NULL);
    is (destroyed, "k2 k1 anon1 anon2", "destroying an empty list is a no-op");

    destroyed[0] = '\0';
    killer_victim = victim;
    if (aux_set (&list, "victim", victim, destroy) < 0
        || aux_set (&list, "killer", killer, destroy_and_delete) < 0)
        bail_out ("aux_set failed");
    aux_destroy (&list);
    is (destroyed, "killer victim",
        "a destructor may delete another value while the list is destroyed");
    ok (list == NULL, "the list is empty");
}

int main (void)
{
    test_rules ();
    test_set_get ();
    test_destroy ();
    done_testing ();
}
