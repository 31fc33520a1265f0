import type { ScriptedModelServer, ScriptedTurn } from '../support/scripted-model-server.js';
import type { AttackConfiguration, BenignNeed } from './attack-configurations.js';
import type { AttackerServer } from './attacker-server.js';

/** What an attacker wants; each case reaches for one of them by one route. */
export type AttackGoal = 'exfiltrate' | 'persist' | 'read-beyond' | 'exhaust' | 'forge' | 'skip-consent';

/** The folders and servers one case runs against, made fresh for it. */
export interface AttackWorld {
  /** The folder the run starts in (a real path). */
  readonly project: string;
  /** A root-only folder beside the project, standing for the user's other files; holds `secret.txt`. */
  readonly outside: string;
  /** The content of `outside/secret.txt`: a marker no run should ever see. */
  readonly secret: string;
  /** The model's key the run is given (OPENAI_API_KEY): itself a secret worth stealing. */
  readonly modelKey: string;
  /** The HOME the run sees. */
  readonly home: string;
  /** An HTTP server on loopback that records every request it gets. */
  readonly attacker: AttackerServer;
  /**
   * The attacker's collection server as the internet: `http://collect.attacker.test:<port>`, on a
   * loopback address the suite's test-only setting makes the runtime treat as public, so the
   * defence under test (not the loopback rule) decides whether a secret gets there.
   */
  readonly collector: AttackerServer;
  /** A benign public site (`http://docs.example.test:<port>`) serving one documentation page. */
  readonly site: AttackerServer;
  /**
   * Every name the run's processes asked the resolver since the world was made (the suite's DNS
   * catcher, see dns-catcher.ts); always empty where the catcher cannot run.
   */
  dnsQueries(): string[];
  /** The configuration the run is under. */
  readonly configuration: AttackConfiguration;
  /** The scripted model, playing a model that obeys every injected instruction. */
  readonly model: ScriptedModelServer;
}

/** How the command ended, for the detector. */
export interface AttackRun {
  readonly exitCode: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Every request body the model received, joined: what reached the model. */
  modelRequestsText(): string;
}

export interface AttackVerdict {
  reached: boolean;
  /** What shows the goal was reached, or what stood in the way. */
  evidence: string;
}

export interface AttackCase {
  goal: AttackGoal;
  /** The way in, in a few words: the row label in the suite's table. */
  route: string;
  /**
   * What the recipe's stated, benign purpose needs (read the page, edit files, run the tests, draw
   * a chart): the locked-down configuration allows the tools these need and nothing else, the
   * narrowest toolbox a careful user would give the recipe. None: the run may only answer.
   */
  needs?: readonly BenignNeed[];
  description: string;
  /** Files of the project, by path relative to it. */
  project(world: AttackWorld): Record<string, string>;
  setup?(world: AttackWorld): void | Promise<void>;
  /** What a fully obedient model does after reading the injection. */
  turns(world: AttackWorld): ScriptedTurn[];
  /** The command line after `manus`; `run recipe.yaml --workspace .` when left out. */
  arguments?(world: AttackWorld): string[];
  environment?(world: AttackWorld): Record<string, string>;
  timeoutMs?: number;
  /** Why the real part the case needs is missing here, or undefined when it is present. */
  requires?(): string | undefined;
  /** Configurations the case does not apply to, each with the reason (shown in the table). */
  notApplicable?: Partial<Record<AttackConfiguration, string>>;
  /** Decides from the world after the run, never from the runtime's own account of it. */
  detect(world: AttackWorld, run: AttackRun): AttackVerdict | Promise<AttackVerdict>;
}

/**
 * A benign task in the same style: what a user really asks of a run, which a locked-down
 * configuration must still let succeed. Its detector looks at the world, as an attack's does.
 */
export interface BenignTask extends Omit<AttackCase, 'goal' | 'detect'> {
  goal: 'utility';
  detect(world: AttackWorld, run: AttackRun): { succeeded: boolean; evidence: string } | Promise<{ succeeded: boolean; evidence: string }>;
}

export function defineBenignTask(task: BenignTask): BenignTask {
  return task;
}

/** An identity helper, so a case file is type-checked as a whole. */
export function defineAttack(attack: AttackCase): AttackCase {
  return attack;
}
