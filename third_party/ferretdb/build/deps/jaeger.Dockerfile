FROM jaegertracing/all-in-one:1.58.1
