# Checks that need every rule defined (included last): a --set-threads or --set-resources value
# Snakemake would fail on deep in its scheduler, or a rule name that matches no rule, stops the run
# here in one line (plmfair.config.check_overrides).
from plmfair.config import check_overrides

try:
    check_overrides(
        threads={rule: getattr(value, "raw", value) for rule, value in workflow.resource_settings.overwrite_threads.items()},
        resources={rule: {name: getattr(value, "raw", value) for name, value in values.items()}
                   for rule, values in workflow.resource_settings.overwrite_resources.items()},
        rules={rule.name for rule in workflow.rules},
    )
except ConfigError as exc:
    raise SystemExit(f"plmfair: {exc}") from None
