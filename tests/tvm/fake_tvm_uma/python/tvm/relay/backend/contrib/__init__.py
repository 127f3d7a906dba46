# The fake contrib package of the fake TVM with UMA.
