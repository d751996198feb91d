import { type Config, checkKeys, didYouMean, type KeysSchema } from '../config/index.js';
import { anthropicMessages } from './anthropic-messages.js';
import type { ProviderApi, ProviderEntry } from './api.js';
import { openAiChat } from './openai-chat.js';

/**
 * Every provider API, by the name `models.providers.<name>.api` gives (docs/runtime.md#providers).
 * Adding one is its module, its line here, its entry in the provider contract suite and its row in
 * the docs.
 */
export const PROVIDER_APIS: Readonly<Record<string, ProviderApi>> = {
  'openai-chat': openAiChat,
  'anthropic-messages': anthropicMessages,
};

/** The keys of `models.providers.<name>` as the config layer reads them (its API's besides). */
interface ProvidersConfig {
  readonly models: {
    readonly providers: Readonly<Record<string, (ProviderEntry & { readonly api?: string }) | undefined>>;
  };
}

/** The keys of an entry of `api`: the ones every provider has (the config checked them), and the API's own. */
function keysOf(api: ProviderApi): KeysSchema {
  return {
    required: api.keys?.required ?? [],
    properties: {
      api: { type: 'string' },
      baseUrl: { type: 'string' },
      apiKey: { type: 'string' },
      maxTokens: { type: 'integer', minimum: 1 },
      maxConcurrent: { type: 'integer', minimum: 1 },
      ...api.keys?.properties,
    },
  };
}

/** The API of `models.providers.<name>`, or the problem with its `api`. */
function apiOf(name: string, entry: { readonly api?: string }): { api?: ProviderApi; problem?: string } {
  const given = entry.api ?? '';
  if (Object.hasOwn(PROVIDER_APIS, given)) return { api: PROVIDER_APIS[given] as ProviderApi };
  const names = Object.keys(PROVIDER_APIS);
  const guess = didYouMean(given, names);
  const hint = guess === undefined ? '' : ` (did you mean ${JSON.stringify(guess)}?)`;
  return {
    problem: `models.providers.${name}.api: expected one of ${names.map((n) => JSON.stringify(n)).join(', ')}${hint}`,
  };
}

/**
 * Checks every `models.providers.<name>` against its API (docs/runtime.md#providers): the API is
 * known and the keys are its. Problems are `path: message` lines, like the config's.
 */
export function checkProviders(config: ProvidersConfig): {
  readonly providers: ReadonlyMap<string, { readonly api: ProviderApi; readonly entry: ProviderEntry }>;
  readonly problems: readonly string[];
} {
  const providers = new Map<string, { api: ProviderApi; entry: ProviderEntry }>();
  const problems: string[] = [];
  for (const [name, entry] of Object.entries(config.models.providers)) {
    if (!entry) continue;
    const { api, problem } = apiOf(name, entry);
    if (!api) {
      problems.push(problem as string);
      continue;
    }
    const checked = checkKeys(entry, keysOf(api), `models.providers.${name}`);
    if (checked.problems.length > 0) {
      problems.push(...checked.problems);
      continue;
    }
    providers.set(name, { api, entry });
  }
  return { providers, problems };
}

/** The problems of `models.providers` (`hookd check` lists them with the rest). */
export function providerProblems(config: ProvidersConfig): readonly string[] {
  return checkProviders(config).problems;
}

/**
 * Calls each provider makes at once, at most, by name, where configured
 * (`models.providers.<name>.maxConcurrent`); the runtime's default for the others
 * (docs/runtime.md#fault-isolation).
 */
export function providerLimits(config: Pick<Config, 'models'>): ReadonlyMap<string, number> {
  return new Map(
    Object.entries(config.models.providers).flatMap(([name, entry]) =>
      entry?.maxConcurrent === undefined ? [] : [[name, entry.maxConcurrent] as const],
    ),
  );
}
