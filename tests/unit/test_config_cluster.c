/* The [cluster] keys: no password in the connection string, a passfile
 * root's alone, a node's name. */
#include "config.h"

#include "cluster_config.h"
#include "configfile.h"
#include "testutil.h"

/* Load text as DIR/loginguard.conf; the number of errors, the first in
 * first_error. */
static char first_error[1024];

static int load(const char *text, struct policy *p)
{
    const char *path = write_file("loginguard.conf", text);
    char conf[256];
    snprintf(conf, sizeof(conf), "%s", path);
    struct errors errs = {0};
    int rc = config_load(conf, true, p, &errs);
    first_error[0] = '\0';
    if (errs.count)
        snprintf(first_error, sizeof(first_error), "%s", errs.messages[0]);
    int count = (int)errs.count;
    errors_free(&errs);
    assert_true((rc == 0) == (count == 0));
    return count;
}

static const char *tail(void)
{
    const char *s = strstr(first_error, "loginguard.conf");
    return s ? s + strlen("loginguard.conf") : first_error;
}

static void test_password_refused_at_its_line(void **state)
{
    (void)state;
    make_test_dir();
    struct policy p;
    assert_int_equal(load("[cluster]\n\ndatabase = host=db password=secret dbname=lg\n", &p), 1);
    assert_non_null(strstr(tail(), ":3: [cluster] database must not hold a password"));
    assert_non_null(strstr(first_error, "passfile="));
    assert_int_equal(load("[cluster]\ndatabase = host=db password = 'se cret'\n", &p), 1);
    assert_int_equal(load("[cluster]\ndatabase = postgresql://lg:secret@db/lg\n", &p), 1);
    assert_non_null(strstr(tail(), ":2: [cluster] database must not hold a password"));
    assert_int_equal(load("[cluster]\ndatabase = postgresql://lg@db/lg?password=x\n", &p), 1);
    /* A database or user that merely has the word in it is no password. */
    assert_int_equal(load("[cluster]\ndatabase = host=db dbname=password_db user=lg\n"
                          "node = login1\n", &p), 0);
    assert_string_equal(p.cluster_database, "host=db dbname=password_db user=lg");
    policy_free(&p);
    assert_int_equal(load("[cluster]\ndatabase = postgresql://lg@db:5432/lg\nnode = n\n", &p),
                     0);
    policy_free(&p);
    remove_test_dir();
}

static void test_conninfo_values(void **state)
{
    (void)state;
    char v[64];
    assert_true(cluster_conninfo_value("host=db passfile = '/a b/p\\'q'", "passfile", v,
                                       sizeof(v)));
    assert_string_equal(v, "/a b/p'q");
    assert_true(cluster_conninfo_value("PASSFILE=/x passfile=/y", "passfile", v, sizeof(v)));
    assert_string_equal(v, "/y");
    assert_false(cluster_conninfo_value("host=db", "passfile", v, sizeof(v)));
    assert_true(cluster_conninfo_value("postgresql://db/lg?sslmode=require&passfile=%2Fetc%2Fp",
                                       "passfile", v, sizeof(v)));
    assert_string_equal(v, "/etc/p");
}

static void test_passfile_root_0600(void **state)
{
    (void)state;
    make_test_dir();
    char text[512], passfile[256];
    snprintf(passfile, sizeof(passfile), "%s", write_file("pgpass", "db:5432:lg:lg:secret\n"));
    snprintf(text, sizeof(text), "[cluster]\ndatabase = host=db passfile=%s\nnode = login1\n",
             passfile);
    struct policy p;
    if (geteuid() != 0) {
        remove_test_dir();
        skip();
    }
    assert_int_equal(chown(passfile, 0, 0), 0);
    assert_int_equal(chmod(passfile, 0644), 0);
    assert_int_equal(load(text, &p), 1);
    assert_non_null(strstr(first_error, "must be a regular file owned by root, mode 0600"));
    assert_non_null(strstr(first_error, "mode 0644"));
    assert_int_equal(chmod(passfile, 0600), 0);
    assert_int_equal(load(text, &p), 0);
    policy_free(&p);
    assert_int_equal(chown(passfile, 1, 0), 0);
    assert_int_equal(load(text, &p), 1);
    assert_non_null(strstr(first_error, "owner uid 1"));
    assert_int_equal(unlink(passfile), 0);
    assert_int_equal(load(text, &p), 1);
    assert_non_null(strstr(first_error, "No such file"));
    remove_test_dir();
}

static void test_node_names(void **state)
{
    (void)state;
    make_test_dir();
    struct policy p;
    char why[300], name[256];
    assert_int_equal(cluster_node_check("login-1.cluster_a", why, sizeof(why)), 0);
    assert_int_equal(cluster_node_check("", why, sizeof(why)), -1);
    assert_int_equal(cluster_node_check("login 1", why, sizeof(why)), -1);
    assert_int_equal(cluster_node_check("l\xc3\xa9", why, sizeof(why)), -1);
    char long_name[80];
    memset(long_name, 'a', 64);
    long_name[64] = '\0';
    assert_int_equal(cluster_node_check(long_name, why, sizeof(why)), -1);
    long_name[63] = '\0';
    assert_int_equal(cluster_node_check(long_name, why, sizeof(why)), 0);
    assert_int_equal(load("[cluster]\ndatabase = host=db\nnode = login/1\n", &p), 1);
    assert_string_equal(tail(), ":3: [cluster] node 'login/1' must be 1 to 63 characters of "
                                "letters, digits, '.', '_' and '-'");
    /* Without node, the host name. */
    assert_int_equal(load("[cluster]\ndatabase = host=db\n", &p), 0);
    char host[256] = "";
    gethostname(host, sizeof(host) - 1);
    assert_int_equal(cluster_node_name(&p, name, sizeof(name), why, sizeof(why)), 0);
    assert_string_equal(name, host);
    policy_free(&p);
    remove_test_dir();
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_password_refused_at_its_line),
        cmocka_unit_test(test_conninfo_values),
        cmocka_unit_test(test_passfile_root_0600),
        cmocka_unit_test(test_node_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
