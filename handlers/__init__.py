"""HTTP handlers: one module per contract tag, one function per operationId. They
translate HTTP to service calls and nothing else."""
