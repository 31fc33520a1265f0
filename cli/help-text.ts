/** What each command's --help adds after the options: examples, the environment it reads, its exit codes. */

const environment = `Environment:
  OPENAI_API_KEY         the API key, when no profile in agents.yaml names another variable
  OPENAI_BASE_URL        an OpenAI-compatible endpoint, e.g. http://127.0.0.1:8000/v1
  MANUS_MODEL            the model id (default gpt-4o-mini; with Ollama, its first model)
  OLLAMA_HOST            where a local Ollama listens (default 127.0.0.1:11434)
  AZURE_OPENAI_ENDPOINT, AZURE_OPENAI_API_KEY   for a profile with provider: azure
  MANUS_RUNS_DIR         where run folders go (default .manus/runs); --runs-dir wins
  MANUS_CHROMIUM_PATH    the browser for browser_use (default /usr/bin/chromium)
  MANUS_PYTHON           the Python for python_execute in bubblewrap or on the host, when its python setting is not set (default python3)
  MANUS_DOCKER_HOST      the Docker daemon for the docker sandbox (else DOCKER_HOST)
  MANUS_DOCKER_WORKSPACE copy or mount: how the workspace reaches the container (default: copy unless the daemon is a local socket)
  MANUS_CACHE_DIR        the start-up code cache and compiled plugins (default $XDG_CACHE_HOME/manus-runtime or ~/.cache/manus-runtime)
  XDG_CONFIG_HOME        where config.yaml is read from: $XDG_CONFIG_HOME/manus/config.yaml (default ~/.config)
  CI=true, MANUS_CI=1    CI mode, as --ci
  NO_COLOR               no colours in progress`;

const runExitCodes = `Exit codes:
  0    success
  1    the task failed (terminate with failure, stuck, a failed check, a wrong answer format)
  2    usage or validation error
  3    a budget ran out (steps, tokens, cost, time)
  4    the model provider failed
  5    a permission was denied, or the run waits for an approval or an answer no one could give
       (status needs-input: continue with manus resume <run> --approve <call>, or --answer TEXT)
  6    a required MCP server the agent uses could not be started, or was lost during the run
  130  interrupted`;

const listingExitCodes = `Exit codes:
  0    success
  2    a file or plugin has an error, or the command line is wrong`;

const batchEnvironment = `Environment:
  OPENAI_API_KEY, OPENAI_BASE_URL, MANUS_MODEL, ...   the model and sandbox, for every item, as manus run --help lists
  MANUS_BATCHES_DIR      where batch folders go (default .manus/batches); --batches-dir wins
  MANUS_BATCH_RETRY_DELAY_MS   the first backoff before a failed item is tried again (default 2000)
  REDIS_PASSWORD         the queue's password, when the --queue URL has none
  CI=true, MANUS_CI=1    CI mode, as --ci`;

export const helpAfter: Record<string, string> = {
  eval: `
An eval file names a recipe, a dataset (rows inline, .jsonl or .csv: parameters and expected
values) and scorers, each giving every run a score from 0 to 1. Each run is a batch item; the
eval's folder .manus/evals/<id>/ holds eval.json (scores, per-model summaries with 95% intervals,
gates), batch.json, items.jsonl and the runs. eval.json serves as the next --baseline.

Examples:
  manus eval recipes/examples/evals/country-capitals.eval.yaml --replay recipes/examples/evals/country-capitals-recording
  manus eval checks.eval.yaml --models gpt-4o-mini,gpt-4o --repeat 3 --cache --report reports
  manus eval checks.eval.yaml --baseline main-eval.json --min-score 0.8 --max-cost 2 --ci
  manus eval resume 20261201-0915

Environment:
  OPENAI_API_KEY, OPENAI_BASE_URL, MANUS_MODEL, ...   the models, as manus run --help lists
  MANUS_EVALS_DIR        where eval folders go (default .manus/evals); --evals-dir wins
  CI=true, MANUS_CI=1    CI mode, as --ci

Exit codes:
  0    every gate passed (runs that scored badly are results, not errors)
  1    a gate failed: --min-score, or --baseline found a model worse
  2    usage or validation error (the eval file, its dataset, the recipe); nothing ran
  3    the eval's budget (--max-tokens, --max-cost, --max-time) ran out
  4    the model provider kept failing for some runs
  130  interrupted; manus eval resume <id> goes on`,
  batch: `
Inputs: a .jsonl file of objects or a .csv file with a header; each key or column is a recipe
parameter, and --param fixes a value for every item. Each item is a run; the batch's folder
.manus/batches/<id>/ holds batch.json (status, totals) and items.jsonl (one line per item outcome).

Examples:
  manus batch recipes/country-facts.yaml --inputs countries.jsonl --concurrency 8 --report reports
  manus batch recipe.yaml --inputs items.csv --item-max-steps 20 --max-cost 5 --ci
  manus batch recipe.yaml --inputs items.jsonl --queue redis://127.0.0.1:6379/0   (start manus worker first)
  manus batch show 20261201-0915 --json
  manus batch resume 20261201-0915

${batchEnvironment}

Exit codes:
  0    every item succeeded
  1    an item did not succeed (each item's own exit code, 1 to 6, is in the table and reports)
  2    usage or validation error (the recipe, the inputs or the command line); nothing ran
  3    the batch's budget (--max-tokens, --max-cost, --max-time) ran out
  130  interrupted; manus batch resume <id> goes on`,
  worker: `
Takes batch items from the queue and runs them with this machine's model, sandbox, browser,
configuration and --trust grants; what each item runs comes with its batch, checked by content
hash. A Redis on another machine needs a password (in the URL or REDIS_PASSWORD) or TLS (rediss://).

Examples:
  manus worker --queue redis://127.0.0.1:6379/0 --concurrency 8
  REDIS_PASSWORD=... manus worker --queue rediss://queue.internal:6380/0 --trust network

${environment}
  REDIS_PASSWORD         the queue's password, when the URL has none
  MANUS_WORKER_EVENTS_CAP_BYTES   compressed events larger than this stay on the worker (default 4 MB)

Exit codes:
  2    the command line or the queue URL is not usable
  130  stopped (Ctrl-C or SIGTERM): running items go back to the queue`,
  run: `
Examples:
  manus run recipes/ask.yaml --param question="What is a ReAct agent?"
  manus run @acme/manus-travel/handbook --param destination=Lisbon   (a recipe of an installed pack)
  manus run recipe.yaml --prompt "a different task" --max-steps 10 --answer yes
  manus run recipe.yaml --json --report reports/ --ci

${environment}

${runExitCodes}`,
  resume: `
Examples:
  manus resume 20261130-0915 --max-steps 40
  manus resume 20261130-0915 --answer "Lisbon"    (a run that stopped as needs-input)
  manus resume 20261130-0915 --approve call_3     (a run that waits for an approval)
  manus resume 20261130-0915 --deny call_3 --reason "use the staging database"

${environment}

${runExitCodes}`,
  replay: `
Examples:
  manus replay recipes/recordings/swe.jsonl
  manus replay demo.jsonl --tools real

${environment}

${runExitCodes}`,
  runs: `
Examples:
  manus runs
  manus runs show 20261130-0915 --full

Environment:
  MANUS_RUNS_DIR         where run folders are (default .manus/runs); --runs-dir wins

${listingExitCodes}`,
  view: `
Examples:
  manus view                      the newest run's report, written into its run folder
  manus view 20261130-0915 --open
  manus view recipes/recordings/planning-flow.jsonl --output flow.html
  manus view --serve --port 8080  every run and batch at http://127.0.0.1:8080/, live

Environment:
  MANUS_RUNS_DIR         where run folders are (default .manus/runs); --runs-dir wins

Exit codes:
  0    success
  2    no such run or batch, or the command line is wrong`,
  validate: `
Examples:
  manus validate agents.yaml recipes/*.yaml plugins/*.ts
  manus validate recipe.yaml --json
  manus validate @acme/manus-travel    (a whole pack: its package.json, agents, plugins and recipes)

${listingExitCodes}`,
  inspect: `
Examples:
  manus inspect recipes/travel-handbook.yaml
  manus inspect @acme/manus-travel             (a whole installed pack)
  manus inspect @acme/manus-travel/handbook --json

Nothing runs: plugin files are read and hashed, not imported (the package's own plugins apart).

${listingExitCodes}`,
  packs: `
Examples:
  npm install @acme/manus-travel && manus packs
  manus packs --json

${listingExitCodes}`,
  pack: `
Examples:
  manus pack init acme-travel
  manus pack init @acme/travel --dir packs/travel

${listingExitCodes}`,
  import: `
Examples:
  manus import openmanus config/config.toml
  manus import openmanus ../OpenManus/config/config.toml --mcp ../OpenManus/config/mcp.json --out agents.yaml
  manus import openmanus config/config.toml --out imported.yaml --force

Each [llm] section becomes a model profile ([llm] is default, [llm.vision] the vision profile);
each api_key becomes a variable the profile names (OPENMANUS_LLM_API_KEY, ...), printed for you to
set. What cannot be carried over ([daytona], api_type = "aws" endpoints, ...) is listed with why.

Exit codes:
  0    success: the file was written
  2    a file cannot be read or parsed (file:line:column), the output file exists (use --force),
       or the command line is wrong`,
  tools: `
Examples:
  manus tools
  manus tools --plugins ./my-plugins --json

${listingExitCodes}`,
  agents: `
Examples:
  manus agents
  manus agents --json

${listingExitCodes}`,
  doctor: `
Checks, each reported as ok, missing or warning with a fix:
  model key, model endpoint   the profile's key variable (never the key) and GET <base URL>/models
  bubblewrap, docker          whether a command runs in bubblewrap here; whether the Docker daemon
                              answers and has the sandbox image (the agent's sandbox says which
                              is needed; with auto, one of the two)
  python, python libraries    the interpreter python_execute runs (tool_settings.python_execute.python,
                              else MANUS_PYTHON, else python3 on PATH) and whether it imports pandas,
                              numpy, matplotlib and openpyxl
  chromium                    whether the browser browser_use would use starts

Examples:
  manus doctor
  manus doctor --agent data_analysis --json

Environment:
  MANUS_PYTHON           the Python for python_execute when its python setting is not set
  MANUS_CHROMIUM_PATH    the browser for browser_use (default /usr/bin/chromium)
  MANUS_DOCKER_HOST      the Docker daemon for the docker sandbox (else DOCKER_HOST)
  MANUS_DOCKER_WORKSPACE copy or mount: how the workspace reaches the container (default: copy unless the daemon is a local socket)
  OPENAI_API_KEY, OPENAI_BASE_URL, MANUS_MODEL   the model, when agents.yaml names none

Exit codes:
  0    everything needed is here (warnings allowed)
  2    an agents file is invalid, or the command line is wrong
  7    something needed is missing`,
};
