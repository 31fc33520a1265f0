/*
 * Generated from the JSON Schemas in schemas/ by scripts/generate-config-types.ts: do not edit.
 * Regenerate with `npm run generate:config-types` after changing a schema.
 */

/**
 * Any of the YAML documents the runtime reads.
 */
export type ConfigYaml = AgentsYaml | RecipeYaml | UserConfigYaml | EvalYaml;
/**
 * Inline text, or `file:` a path relative to this YAML file.
 */
export type PromptYaml =
  | string
  | {
      file: string;
    };
/**
 * Where code-running tools execute: `auto` (the default: bubblewrap, else Docker, else the host only with the user's consent), `bwrap`, `docker` or `host`, or an object with options.
 */
export type SandboxYaml =
  | ('auto' | 'host' | 'bwrap' | 'docker')
  | {
      kind: 'auto' | 'host' | 'bwrap' | 'docker';
      /**
       * Whether sandboxed code reaches the network: false (the default), true for the whole network (--trust network), or { allow: [hosts] } for named hosts only, reached through the runtime's proxy (--trust hosts, unless the user's config lists them under network.allow).
       */
      network?:
        | boolean
        | {
            allow: HostPatternsYaml;
          };
      /**
       * The docker sandbox's image. Left out, it is the image .ci/setup-docker.sh builds: manus-sandbox:bookworm-<hash of runtime/config/sandbox-image-packages.txt>, with Python and the packages the shipped agents import.
       */
      image?: string;
      memory_mb?: number;
      cpus?: number;
      pids?: number;
      /**
       * The user sandboxed commands run as: uid or uid:gid, numeric; never root or a system group (gid 0 or below 1000, but 65534). From a recipe, a pack or an agents.yaml beside a recipe, it needs the user's --trust user.
       */
      user?: string;
      /**
       * Environment variables passed into the sandbox; nothing else is.
       */
      pass_env?: string[];
    };
/**
 * Host names, each with an optional port: api.github.com, *.wikipedia.org (names below it, not itself), pypi.org:443, [2001:db8::1]:8080.
 */
export type HostPatternsYaml = string[];
/**
 * A tool name, with `*` for any characters (`mcp_github_*`), optionally followed by a pattern in parentheses: `bash(git status)`, `str_replace_editor(path=docs/**)`.
 */
export type PermissionRuleYaml = string;
/**
 * One success criterion: exactly one of command, file, answer or answer_matches.
 */
export type CheckYaml = CheckYaml1 & CheckYaml2;
export type CheckYaml2 =
  | {
      command: unknown;
      [k: string]: unknown;
    }
  | {
      file: unknown;
      [k: string]: unknown;
    }
  | {
      answer: unknown;
      [k: string]: unknown;
    }
  | {
      answer_matches: unknown;
      [k: string]: unknown;
    };
/**
 * Host names, each with an optional port: api.github.com, *.wikipedia.org (names below it, not itself), pypi.org:443, [2001:db8::1]:8080.
 */
export type HostPatternsYaml1 = string[];
/**
 * Host names, each with an optional port: api.github.com, *.wikipedia.org (names below it, not itself), pypi.org:443, [2001:db8::1]:8080.
 */
export type HostPatternsYaml2 = string[];

/**
 * Model profiles and named agents. Each agent is data: prompts, a toolbox, budgets and a model profile.
 */
export interface AgentsYaml {
  $schema?: string;
  /**
   * The format version; only 1 exists.
   */
  version: 1;
  /**
   * Model profiles by name; agents pick one with `llm:`. `default` is used when an agent names none.
   */
  llm?: {
    [k: string]: ProfileYaml;
  };
  /**
   * Agents by name.
   */
  agents?: {
    [k: string]: AgentYaml;
  };
  mcp_servers?: McpServersYaml;
  a2a?: A2AAgentsYaml;
}
export interface ProfileYaml {
  /**
   * How to reach the model. Every provider speaks the OpenAI chat completions protocol.
   */
  provider?: 'openai' | 'azure' | 'ollama' | 'openai-compatible';
  /**
   * The endpoint, for example http://127.0.0.1:11434/v1. Defaults to OPENAI_BASE_URL.
   */
  base_url?: string;
  /**
   * The environment variable holding the API key. Defaults to OPENAI_API_KEY.
   */
  api_key_env?: string;
  /**
   * The model id. MANUS_MODEL and --model override it.
   */
  model?: string;
  max_tokens?: number;
  temperature?: number;
  context_window?: number;
  /**
   * The model accepts images; screenshots and image results are sent to it.
   */
  vision?: boolean;
  /**
   * A reasoning model (o-series, gpt-5): sends max_completion_tokens and reasoning_effort, no temperature. Detected from the model id when omitted.
   */
  reasoning?: boolean;
  reasoning_effort?: 'minimal' | 'low' | 'medium' | 'high';
  /**
   * Stream replies. By default replies stream when the text is shown as it arrives (on a terminal).
   */
  stream?: boolean;
  timeout_seconds?: number;
  /**
   * The longest wait between chunks of a streamed reply before it is abandoned and retried. Defaults to 60.
   */
  stream_idle_timeout_seconds?: number;
  /**
   * Azure OpenAI API version.
   */
  api_version?: string;
  /**
   * Azure OpenAI deployment name; defaults to the model id.
   */
  deployment?: string;
  /**
   * Extra HTTP headers sent with every request. Put credentials in headers_env, not here.
   */
  headers?: {
    [k: string]: string;
  };
  /**
   * Headers whose values come from environment variables: header name to variable name. Their values are secrets, redacted from every output.
   */
  headers_env?: {
    [k: string]: string;
  };
  /**
   * Profiles to move to, in order, when this one's provider fails after its retries with an exhausted quota, rate limits, server errors, timeouts or an unreachable endpoint, or when a conversation still too long after compaction fits a fallback's larger context_window. Never on a request's own fault or a rejected key.
   */
  fallback?: string[];
  /**
   * How long a run stays on a fallback before it tries this profile again.
   */
  fallback_cooldown_seconds?: number;
  /**
   * automatic: the provider caches prompt prefixes itself (OpenAI, DeepSeek, most others). explicit: the endpoint needs cache markers (Anthropic through OpenAI-compatible gateways); they are put on the system prompt and the last stored message.
   */
  cache?: 'automatic' | 'explicit';
  /**
   * Token prices in US dollars per million tokens. Overrides the built-in price table, which knows the models of most hosted providers; a model it does not know needs this for a cost budget.
   */
  price?: {
    input_per_million: number;
    output_per_million: number;
    /**
     * Prompt tokens served from the provider's cache; charged as other input when left out.
     */
    cached_input_per_million?: number;
  };
  /**
   * Limits shared by every run in the process that uses this profile at the same endpoint and model. Requests wait for room instead of failing; a 429 from the provider slows all of them down.
   */
  rate_limit?: {
    /**
     * Requests started in any 60-second window.
     */
    requests_per_minute?: number;
    /**
     * Tokens in any 60-second window: the request's estimate before it is sent, corrected by the reply's usage.
     */
    tokens_per_minute?: number;
    /**
     * Requests in flight at once.
     */
    max_concurrent?: number;
  };
  retry?: {
    max_attempts?: number;
    base_delay_ms?: number;
    max_delay_ms?: number;
    max_retry_after_seconds?: number;
  };
}
export interface AgentYaml {
  description?: string;
  system_prompt?: PromptYaml;
  next_step_prompt?: PromptYaml;
  tools?: string[];
  max_steps?: number;
  /**
   * Observations longer than this many characters keep head and tail.
   */
  max_observe?: number;
  tool_choice?: 'auto' | 'required' | 'none';
  parallel_tool_calls?: boolean;
  /**
   * A reply with text and no tool call ends the run (default true).
   */
  finish_on_text?: boolean;
  /**
   * Summarise older turns when a request nears the profile's context_window.
   */
  compaction?: {
    /**
     * Fraction of the context window that triggers it (default 0.8).
     */
    threshold?: number;
    /**
     * Recent messages always kept word for word (default 6).
     */
    keep_recent_messages?: number;
  };
  /**
   * Identical turns in a row before a nudge; the same again after it stops the run.
   */
  stuck_after?: number;
  /**
   * Failed tool calls in a row, whatever they were, before a nudge (default 5); twice as many stop the run as stuck. 0 turns it off.
   */
  error_streak?: number;
  /**
   * A profile name from `llm:`.
   */
  llm?: string;
  context_providers?: string[];
  sandbox?: SandboxYaml;
  permissions?: PermissionsYaml;
  /**
   * Settings handed to each tool by name.
   */
  tool_settings?: {
    [k: string]: {
      [k: string]: unknown;
    };
  };
}
/**
 * What the agent may call without asking. Each rule is a tool name (`bash`, `mcp_github_*`, `agent:researcher`) or a tool with a pattern for one of its arguments (`bash(git status)`, `bash(npm run test:*)`, `str_replace_editor(path=docs/**)`, `web_fetch(domain=*.europa.eu)`). deny beats ask beats allow; a call no rule names gets `default`. Every file's block decides on its own and the strictest answer stands, so a recipe or pack can tighten and never loosen.
 */
export interface PermissionsYaml {
  /**
   * The answer for a call no rule names.
   */
  default?: 'allow' | 'ask' | 'deny';
  /**
   * Calls allowed without asking.
   */
  allow?: PermissionRuleYaml[];
  /**
   * Calls that need a person's approval first.
   */
  ask?: PermissionRuleYaml[];
  /**
   * Calls refused; the model is told why.
   */
  deny?: PermissionRuleYaml[];
  /**
   * deny: every call that would need approval is refused instead, with a reason the model sees (for unattended runs).
   */
  on_ask?: 'ask' | 'deny';
}
/**
 * MCP servers whose tools agents may name (mcp_<server>_<tool>, or mcp_<server>_* for all of them). `file:` names an mcpServers JSON file (the .mcp.json format), relative to this file, whose servers are added.
 */
export interface McpServersYaml {
  /**
   * An mcpServers JSON file (the .mcp.json format), relative to this file.
   */
  file?: string;
  [k: string]: McpServerYaml | string | undefined;
}
/**
 * One MCP server: a command spoken to over stdio (command, args, env, cwd), or a URL (Streamable HTTP, falling back to SSE).
 */
export interface McpServerYaml {
  /**
   * The program to start; a relative path is relative to the folder it starts in.
   */
  command?: string;
  args?: string[];
  /**
   * Variables for the server: a value, or {env: NAME} to pass one of the user's variables.
   */
  env?: {
    [k: string]: string | EnvironmentReferenceYaml;
  };
  /**
   * The folder the command starts in, relative to the declaring file; the declaring file's folder when left out.
   */
  cwd?: string;
  /**
   * The server's HTTP endpoint.
   */
  url?: string;
  /**
   * Header name to the environment variable holding its value.
   */
  headers_env?: {
    [k: string]: string;
  };
  /**
   * Which of the server's tools are offered: `allow` lists the only ones, `deny` removes some.
   */
  tools?: {
    allow?: string[];
    deny?: string[];
  };
  /**
   * The run fails (exit code 6) when the server cannot start or is lost; otherwise it goes on without it. A server whose tools the agent names one by one (not mcp_<server>_*) is required whatever this says.
   */
  required?: boolean;
  /**
   * How long the server may take to start and list its tools.
   */
  startup_timeout_seconds?: number;
  /**
   * How long one tool call may take before it is cancelled.
   */
  call_timeout_seconds?: number;
  /**
   * The largest message (a tool's result) read from the server, in megabytes; a longer one is cut off while it is read and the call answers with an error saying so.
   */
  max_result_mb?: number;
}
export interface EnvironmentReferenceYaml {
  /**
   * The name of one of the user's environment variables.
   */
  env: string;
}
/**
 * Remote agents spoken to over A2A, each a tool agents may name: a2a_<name>.
 */
export interface A2AAgentsYaml {
  [k: string]: A2AAgentYaml;
}
/**
 * One remote A2A agent: where its agent card is, and what the tool that calls it sends.
 */
export interface A2AAgentYaml {
  /**
   * The agent's base URL; its card is read from /.well-known/agent-card.json below it.
   */
  url: string;
  /**
   * What the tool tells the model about the agent; a generic text naming the agent otherwise.
   */
  description?: string;
  /**
   * Header name to the environment variable holding its value (a bearer token: Authorization). Sent only to the url's own origin; from a file you did not write, only with --trust env.
   */
  headers_env?: {
    [k: string]: string;
  };
  /**
   * How long one call may wait for the agent to finish or ask for input.
   */
  timeout_seconds?: number;
}
/**
 * A task for an agent: a prompt template with typed parameters, the agent to run it, plugins and budgets.
 */
export interface RecipeYaml {
  $schema?: string;
  version: 1;
  name: string;
  description?: string;
  /**
   * Typed parameters filled into the prompt as {{name}}.
   */
  parameters?: {
    [k: string]: ParameterYaml;
  };
  /**
   * Inline text, or `file:` a path relative to this YAML file.
   */
  prompt?:
    | string
    | {
        file: string;
      };
  /**
   * An agent name from agents.yaml, or an agent declared inline.
   */
  agent?: string | AgentYaml;
  /**
   * Steps run in order instead of one agent: each has a name and a kind (agent, parallel, or a kind a plugin defines). Later steps use earlier results as {{steps.<name>.answer}}.
   *
   * @minItems 1
   */
  flow?: FlowStepYaml[];
  /**
   * A flow's answer, a template such as "{{steps.report.answer}}"; the last step's answer when not given.
   */
  answer?: string;
  /**
   * Folders of tool plugins, relative to the recipe.
   */
  plugins?: string[];
  /**
   * Installed packs (npm package names) whose agents and plugins this recipe uses besides its own pack's; where two define one name, say which with name@pack.
   */
  packs?: string[];
  budgets?: BudgetsYaml;
  /**
   * A JSON Schema the final answer must satisfy.
   */
  response?: {
    [k: string]: unknown;
  };
  /**
   * The workspace folder, relative to the current directory. Default: workspace/<run id>. A folder outside the recipe's folder and the current directory needs the user's --trust workspace, unless the user chose it (--workspace, or a --param the template begins with).
   */
  workspace?: string;
  /**
   * Where code-running tools execute: `auto` (the default: bubblewrap, else Docker, else the host only with the user's consent), `bwrap`, `docker` or `host`, or an object with options.
   */
  sandbox?:
    | ('auto' | 'host' | 'bwrap' | 'docker')
    | {
        kind: 'auto' | 'host' | 'bwrap' | 'docker';
        /**
         * Whether sandboxed code reaches the network: false (the default), true for the whole network (--trust network), or { allow: [hosts] } for named hosts only, reached through the runtime's proxy (--trust hosts, unless the user's config lists them under network.allow).
         */
        network?:
          | boolean
          | {
              allow: HostPatternsYaml;
            };
        /**
         * The docker sandbox's image. Left out, it is the image .ci/setup-docker.sh builds: manus-sandbox:bookworm-<hash of runtime/config/sandbox-image-packages.txt>, with Python and the packages the shipped agents import.
         */
        image?: string;
        memory_mb?: number;
        cpus?: number;
        pids?: number;
        /**
         * The user sandboxed commands run as: uid or uid:gid, numeric; never root or a system group (gid 0 or below 1000, but 65534). From a recipe, a pack or an agents.yaml beside a recipe, it needs the user's --trust user.
         */
        user?: string;
        /**
         * Environment variables passed into the sandbox; nothing else is.
         */
        pass_env?: string[];
      };
  permissions?: PermissionsYaml2;
  mcp_servers?: McpServersYaml1;
  a2a?: A2AAgentsYaml1;
  /**
   * Settings handed to each tool by name, over the agent's. browser_use's executable_path, extra_args and cdp_url need the user's --trust browser; a keyed search engine's endpoint (web_search's endpoints.tavily and endpoints.brave, also under browser_use's web_search) needs --trust env.
   */
  tool_settings?: {
    [k: string]: {
      [k: string]: unknown;
    };
  };
  /**
   * Answers to the agent's questions (ask_human) for runs with no one to ask: a text the question contains, mapped to the answer. Never a permission prompt: only the user approves those.
   */
  answers?: {
    [k: string]: string;
  };
  /**
   * Success criteria, checked after the agent finishes with success; a failed check fails the run (exit code 1).
   */
  checks?: CheckYaml[];
  /**
   * Another attempt when checks fail: the agent is told which checks failed and what they printed.
   */
  retry?: {
    /**
     * Attempts in all, the first one included.
     */
    max_attempts: number;
    /**
     * A shell command run in the workspace before each retry, for example to reset generated files.
     */
    on_failure?: string;
  };
}
export interface ParameterYaml {
  type: 'string' | 'number' | 'boolean' | 'enum' | 'list';
  description?: string;
  required?: boolean;
  /**
   * The value when none is given; a list parameter's default is a list of strings.
   */
  default?: (string | number | boolean) | string[];
  /**
   * The allowed values of an enum parameter.
   *
   * @minItems 1
   */
  values?: string[];
}
/**
 * A step of a flow. Fields beyond these belong to the step's kind and are checked against it.
 */
export interface FlowStepYaml {
  /**
   * The step's name, used in its path and in {{steps.<name>...}}.
   */
  name?: string;
  /**
   * agent, parallel, or a kind a plugin defines (plan).
   */
  kind: string;
  /**
   * agent steps: an agent name from agents.yaml, or an agent declared inline.
   */
  agent?: string | AgentYaml;
  /**
   * agent steps: the task, a template.
   */
  prompt?: string;
  /**
   * agent steps: a JSON Schema the answer must match; later steps read it as {{steps.<name>.structured.<field>}}.
   */
  response?: {
    [k: string]: unknown;
  };
  /**
   * parallel steps: named steps run at once.
   *
   * @minItems 1
   */
  steps?: FlowStepYaml[];
  step?: FlowStepYaml;
  /**
   * parallel steps: a template that gives a list, such as "{{steps.outline.structured.questions}}" or a list parameter.
   */
  for_each?: string;
  /**
   * parallel steps: how many run at once (default 4).
   */
  max_concurrency?: number;
  budgets?: BudgetsYaml;
  permissions?: PermissionsYaml1;
  /**
   * Go on with the next step when this one does not succeed (default false: the flow stops).
   */
  continue_on_failure?: boolean;
  [k: string]: unknown;
}
/**
 * Limits: for the whole run (in a flow, all its steps together), or for one flow step within the flow's.
 */
export interface BudgetsYaml {
  steps?: number;
  tokens?: number;
  time_seconds?: number;
  /**
   * US dollars, priced with the model profile's `price`.
   */
  cost?: number;
}
/**
 * What the agent may call without asking. Each rule is a tool name (`bash`, `mcp_github_*`, `agent:researcher`) or a tool with a pattern for one of its arguments (`bash(git status)`, `bash(npm run test:*)`, `str_replace_editor(path=docs/**)`, `web_fetch(domain=*.europa.eu)`). deny beats ask beats allow; a call no rule names gets `default`. Every file's block decides on its own and the strictest answer stands, so a recipe or pack can tighten and never loosen.
 */
export interface PermissionsYaml1 {
  /**
   * The answer for a call no rule names.
   */
  default?: 'allow' | 'ask' | 'deny';
  /**
   * Calls allowed without asking.
   */
  allow?: PermissionRuleYaml[];
  /**
   * Calls that need a person's approval first.
   */
  ask?: PermissionRuleYaml[];
  /**
   * Calls refused; the model is told why.
   */
  deny?: PermissionRuleYaml[];
  /**
   * deny: every call that would need approval is refused instead, with a reason the model sees (for unattended runs).
   */
  on_ask?: 'ask' | 'deny';
}
/**
 * What the agent may call without asking. Each rule is a tool name (`bash`, `mcp_github_*`, `agent:researcher`) or a tool with a pattern for one of its arguments (`bash(git status)`, `bash(npm run test:*)`, `str_replace_editor(path=docs/**)`, `web_fetch(domain=*.europa.eu)`). deny beats ask beats allow; a call no rule names gets `default`. Every file's block decides on its own and the strictest answer stands, so a recipe or pack can tighten and never loosen.
 */
export interface PermissionsYaml2 {
  /**
   * The answer for a call no rule names.
   */
  default?: 'allow' | 'ask' | 'deny';
  /**
   * Calls allowed without asking.
   */
  allow?: PermissionRuleYaml[];
  /**
   * Calls that need a person's approval first.
   */
  ask?: PermissionRuleYaml[];
  /**
   * Calls refused; the model is told why.
   */
  deny?: PermissionRuleYaml[];
  /**
   * deny: every call that would need approval is refused instead, with a reason the model sees (for unattended runs).
   */
  on_ask?: 'ask' | 'deny';
}
/**
 * MCP servers whose tools agents may name (mcp_<server>_<tool>, or mcp_<server>_* for all of them). `file:` names an mcpServers JSON file (the .mcp.json format), relative to this file, whose servers are added.
 */
export interface McpServersYaml1 {
  /**
   * An mcpServers JSON file (the .mcp.json format), relative to this file.
   */
  file?: string;
  [k: string]: McpServerYaml | string | undefined;
}
/**
 * Remote agents spoken to over A2A, each a tool agents may name: a2a_<name>.
 */
export interface A2AAgentsYaml1 {
  [k: string]: A2AAgentYaml;
}
export interface CheckYaml1 {
  /**
   * How reports name the check. Default: taken from the check.
   */
  name?: string;
  /**
   * A shell command run in the workspace, in the run's sandbox; it passes when it exits with status 0.
   */
  command?: string;
  /**
   * How long the command may run before it is killed and fails. Default: 300.
   */
  timeout_seconds?: number;
  /**
   * A path relative to the workspace; the file must exist there.
   */
  file?: string;
  /**
   * A JSON Schema the file must satisfy, read as JSON, or as YAML when it ends in .yaml or .yml.
   */
  schema?: {
    [k: string]: unknown;
  };
  /**
   * A regular expression (JavaScript syntax) the file's text must contain a match for; ^ and $ match at line ends.
   */
  matches?: string;
  /**
   * The final answer must satisfy the recipe's response schema.
   */
  answer?: 'matches_response';
  /**
   * A regular expression (JavaScript syntax) the final answer must contain a match for; ^ and $ match at line ends.
   */
  answer_matches?: string;
}
/**
 * The user's own settings, in $XDG_CONFIG_HOME/manus/config.yaml (default ~/.config/manus/config.yaml). Trusted: recipes and the agents.yaml files that ship with them are not.
 */
export interface UserConfigYaml {
  $schema?: string;
  version: 1;
  /**
   * Grants given to every run, as with --trust: what a recipe may ask for beyond its agent's sandbox and settings.
   */
  trust?: (
    | 'host'
    | 'network'
    | 'hosts'
    | 'env'
    | 'image'
    | 'resources'
    | 'workspace'
    | 'browser'
    | 'mcp'
    | 'sampling'
    | 'user'
    | 'all'
  )[];
  /**
   * What the runtime's own connections on an agent's behalf (web_fetch, web_search, the browser, MCP servers named by recipes) and a sandbox's allowed hosts may reach; with only, every one of them.
   */
  network?: {
    allow?: HostPatternsYaml1;
    only?: HostPatternsYaml2;
    /**
     * Allow loopback, private-network, link-local and cloud-metadata addresses (127.0.0.1, 10.x, 192.168.x, 169.254.169.254, ::1, ...). Default false.
     */
    allow_private?: boolean;
  };
  permissions?: PermissionsYaml3;
  mcp_servers?: McpServersYaml2;
  a2a?: A2AAgentsYaml2;
}
/**
 * What the agent may call without asking. Each rule is a tool name (`bash`, `mcp_github_*`, `agent:researcher`) or a tool with a pattern for one of its arguments (`bash(git status)`, `bash(npm run test:*)`, `str_replace_editor(path=docs/**)`, `web_fetch(domain=*.europa.eu)`). deny beats ask beats allow; a call no rule names gets `default`. Every file's block decides on its own and the strictest answer stands, so a recipe or pack can tighten and never loosen.
 */
export interface PermissionsYaml3 {
  /**
   * The answer for a call no rule names.
   */
  default?: 'allow' | 'ask' | 'deny';
  /**
   * Calls allowed without asking.
   */
  allow?: PermissionRuleYaml[];
  /**
   * Calls that need a person's approval first.
   */
  ask?: PermissionRuleYaml[];
  /**
   * Calls refused; the model is told why.
   */
  deny?: PermissionRuleYaml[];
  /**
   * deny: every call that would need approval is refused instead, with a reason the model sees (for unattended runs).
   */
  on_ask?: 'ask' | 'deny';
}
/**
 * MCP servers whose tools agents may name (mcp_<server>_<tool>, or mcp_<server>_* for all of them). `file:` names an mcpServers JSON file (the .mcp.json format), relative to this file, whose servers are added.
 */
export interface McpServersYaml2 {
  /**
   * An mcpServers JSON file (the .mcp.json format), relative to this file.
   */
  file?: string;
  [k: string]: McpServerYaml | string | undefined;
}
/**
 * Remote agents spoken to over A2A, each a tool agents may name: a2a_<name>.
 */
export interface A2AAgentsYaml2 {
  [k: string]: A2AAgentYaml;
}
/**
 * An eval: a recipe run over a dataset of rows, each run scored by scorers to a number in [0, 1]. Trusted like a recipe, not like the user's configuration.
 */
export interface EvalYaml {
  version: 1;
  /**
   * The eval's name in tables and reports (default: the file's name).
   */
  name?: string;
  description?: string;
  /**
   * The recipe to evaluate: a file relative to the eval file, or a pack's recipe as pack/recipe.
   */
  recipe: string;
  /**
   * The rows: inline, or a .jsonl or .csv file relative to the eval file.
   */
  dataset: string | InlineDatasetYaml;
  /**
   * @minItems 1
   */
  scorers: ScorerYaml[];
  /**
   * The model profile (from agents.yaml) that judge scorers use when they name none; never one of the models under test.
   */
  judge?: string;
}
export interface InlineDatasetYaml {
  /**
   * @minItems 1
   */
  rows: RowYaml[];
}
export interface RowYaml {
  /**
   * The row's name in tables and baselines (default: its number).
   */
  id?: string;
  /**
   * The recipe's parameters for this row.
   */
  parameters?: {
    [k: string]: string | number | boolean;
  };
  /**
   * What the scorers compare with, as {{expected}} or {{expected.<key>}}.
   */
  expected?:
    | string
    | number
    | boolean
    | {
        [k: string]: unknown;
      }
    | unknown[]
    | null;
}
export interface ScorerYaml {
  type:
    | 'checks'
    | 'equals'
    | 'includes'
    | 'regex'
    | 'number'
    | 'json_schema'
    | 'field'
    | 'files'
    | 'tool_called'
    | 'tool_not_called'
    | 'max_steps'
    | 'max_cost'
    | 'judge'
    | 'plugin';
  /**
   * The scorer's name in reports (default: its type).
   */
  name?: string;
  /**
   * The score at or above which the scorer passed (default 1; 0.5 for judge).
   */
  threshold?: number;
  /**
   * Its weight in the item's score, the weighted mean of its scorers' (default 1).
   */
  weight?: number;
  /**
   * equals, includes, number: what to compare with; a template such as {{expected.capital}}.
   */
  value?:
    | string
    | number
    | boolean
    | {
        [k: string]: unknown;
      }
    | unknown[]
    | null;
  /**
   * regex: a regular expression the answer (or the field) must match.
   */
  pattern?: string;
  /**
   * equals, includes: compare letter case too (default false).
   */
  case_sensitive?: boolean;
  /**
   * number: how far off the answer may be (default 0).
   */
  tolerance?: number;
  /**
   * number: the tolerance is a fraction of the expected value.
   */
  relative?: boolean;
  /**
   * field: a dotted path in the structured answer (items.0.name); files: a workspace file.
   */
  path?: string;
  /**
   * json_schema: the schema the structured answer (or JSON in the answer) must match.
   */
  schema?: {
    [k: string]: unknown;
  };
  /**
   * files: a regular expression the file must match.
   */
  matches?: string;
  /**
   * tool_called, tool_not_called: the tool's name.
   */
  tool?: string;
  /**
   * max_steps, max_cost: the most the run may take.
   */
  limit?: number;
  /**
   * judge: what the judge scores, 0 to 1.
   */
  rubric?: string;
  /**
   * judge: the model profile that judges (default: the eval's judge).
   */
  profile?: string;
  /**
   * plugin: a file default-exporting a scorer made with defineScorer, relative to the eval file.
   */
  file?: string;
  /**
   * plugin: settings given to the plugin scorer.
   */
  options?: {
    [k: string]: unknown;
  };
}
