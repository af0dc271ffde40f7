#include <sqlite3.h>

/// sqlite3_config is variadic, which Swift can't call: turns off SQLite's memory statistics
/// (SQLITE_CONFIG_MEMSTATUS, 0), whose global mutex every allocation inside SQLite takes. Must run
/// before SQLite initialises (before the first sqlite3_open); returns SQLITE_MISUSE after.
/// Source: https://sqlite.org/c3ref/c_config_covering_index_scan.html#sqliteconfigmemstatus
static inline int photowall_sqlite3_disable_memstatus(void) {
    return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}
