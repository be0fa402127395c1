# Checks that need every rule defined (included last): a --set-threads or --set-resources value
# Snakemake would fail on deep in its scheduler, or a rule name that matches no rule, stops the run
# here in one line (plmfair.config.check_overrides).
from plmfair.config import check_overrides

try:
    check_overrides(
        # (a line may not start with "rule:" here: snakefmt would read a rule)
        threads={
            job: getattr(value, "raw", value) for job, value in workflow.resource_settings.overwrite_threads.items()
        },
        resources={
            job: {name: getattr(value, "raw", value) for name, value in values.items()}
            for job, values in workflow.resource_settings.overwrite_resources.items()
        },
        rules={job.name for job in workflow.rules},
    )
except ConfigError as exc:
    raise SystemExit(f"plmfair: {exc}") from None
