FROM citusdata/citus:12.1
