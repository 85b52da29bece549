// Shared test setup: quiet structured logs unless a test asks for them, and never a real AWS call.
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
process.env.POWERTOOLS_DEV ??= 'false';
process.env.AWS_REGION ??= 'eu-west-1';
process.env.AWS_ACCESS_KEY_ID ??= 'test';
process.env.AWS_SECRET_ACCESS_KEY ??= 'test';
process.env.AWS_EC2_METADATA_DISABLED = 'true';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
