// TOML -> jansson (toml.h), the project's one C++ file (toml++ is C++17).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <sstream>

#include <toml++/toml.h>

#include "toml.h"

static json_t *convert (const toml::node &node);

static json_t *convert_table (const toml::table &t)
{
    json_t *o = json_object ();
    for (auto &&[k, v] : t) {
        std::string key (k.str ());
        json_object_set_new (o, key.c_str (), convert (v));
    }
    return o;
}

static json_t *convert (const toml::node &node)
{
    if (auto t = node.as_table ())
        return convert_table (*t);
    if (auto a = node.as_array ()) {
        json_t *arr = json_array ();
        for (auto &&e : *a)
            json_array_append_new (arr, convert (e));
        return arr;
    }
    if (auto s = node.as_string ())
        return json_string (s->get ().c_str ());
    if (auto i = node.as_integer ())
        return json_integer (i->get ());
    if (auto f = node.as_floating_point ())
        return json_real (f->get ());
    if (auto b = node.as_boolean ())
        return json_boolean (b->get ());
    // dates and times become their TOML text
    std::ostringstream ss;
    if (auto d = node.as_date ())
        ss << d->get ();
    else if (auto tm = node.as_time ())
        ss << tm->get ();
    else if (auto dt = node.as_date_time ())
        ss << dt->get ();
    return json_string (ss.str ().c_str ());
}

// The first line of each table under t (named by its dotted path from
// the top), where the file has one: an implicit table has none.
static void record_lines (const toml::table &t,
                          const std::string &path,
                          json_t *out)
{
    if (t.source ().begin.line > 0)
        json_object_set_new (out,
                             path.c_str (),
                             json_integer (t.source ().begin.line));
    for (auto &&[k, v] : t) {
        if (auto sub = v.as_table ())
            record_lines (*sub, path + "." + std::string (k.str ()), out);
    }
}

extern "C" json_t *toml_file_to_json (const char *path,
                                      json_t **lines,
                                      json_t **table_lines,
                                      jobtap_host_error_t *err)
{
    toml::table tbl;
    try {
        tbl = toml::parse_file (path);
    }
    catch (const toml::parse_error &e) {
        const auto &src = e.source ();
        errno = EINVAL;
        if (src.begin.line > 0)
            errprintf (err,
                       "%s:%u:%u: %s",
                       path,
                       (unsigned)src.begin.line,
                       (unsigned)src.begin.column,
                       std::string (e.description ()).c_str ());
        else
            errprintf (err,
                       "%s: %s",
                       path,
                       std::string (e.description ()).c_str ());
        return nullptr;
    }
    catch (const std::exception &e) {
        errno = EINVAL;
        errprintf (err, "%s: %s", path, e.what ());
        return nullptr;
    }
    json_t *o = convert_table (tbl);
    if (table_lines) {
        *table_lines = json_object ();
        for (const char *top : {"policy", "queues"})
            if (auto t = tbl[top].as_table ())
                record_lines (*t, top, *table_lines);
    }
    if (lines) {
        *lines = json_array ();
        auto plugins = tbl["job-manager"]["plugins"];
        if (auto a = plugins.as_array ()) {
            for (auto &&e : *a)
                json_array_append_new (*lines,
                                       json_integer (e.source ().begin.line));
        }
    }
    return o;
}
