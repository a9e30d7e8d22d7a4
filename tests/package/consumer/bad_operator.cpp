// A library that holds only a faulty user operator (CONSUMER_BAD_OPERATOR in CMakeLists.txt).
int vkprim_consumer_bad_operator_anchor() { return 0; }
