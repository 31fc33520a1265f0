/**
 * The secrets of the current environment, including the variables the agents files here name:
 * what reads runs back (`manus runs`, `manus view`) redacts with, for runs recorded without them.
 */
import { agentsFilesFor, loadAgentsConfig } from '../runtime/runs/recipe/resolve-recipe.js';
import { SecretRedactor } from '../runtime/services/secret-redaction.js';

export function currentRedactor(): SecretRedactor {
  const { config } = loadAgentsConfig(agentsFilesFor(undefined, process.cwd()));
  return SecretRedactor.forProfiles(config.profiles.values(), process.env);
}
