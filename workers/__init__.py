"""Background work: the queue interface (RQ or in-process) and the job functions."""
