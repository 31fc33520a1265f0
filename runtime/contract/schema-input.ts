/**
 * The TypeScript type of the value a JSON Schema accepts, for the schemas tools write as literals:
 * `defineTool` reads a tool's input type from its `parameters`, so a plugin author writes each
 * input once. Covers what tool schemas use (object, array, string, number, integer, boolean, null,
 * enum, const, anyOf, oneOf); anything else is `unknown`, which the code must then narrow.
 */

export type SchemaInput<Schema> =
  Schema extends { const: infer Value } ? Value
  : Schema extends { enum: readonly (infer Value)[] } ? Value
  : Schema extends { anyOf: readonly (infer Option)[] } ? SchemaInput<Option>
  : Schema extends { oneOf: readonly (infer Option)[] } ? SchemaInput<Option>
  : Schema extends { type: readonly (infer Name)[] } ? SchemaInput<Omit<Schema, 'type'> & { type: Name }>
  : Schema extends { type: 'string' } ? string
  : Schema extends { type: 'number' | 'integer' } ? number
  : Schema extends { type: 'boolean' } ? boolean
  : Schema extends { type: 'null' } ? null
  : Schema extends { type: 'array'; items: infer Items } ? SchemaInput<Items>[]
  : Schema extends { type: 'array' } ? unknown[]
  : Schema extends { type: 'object'; properties: infer Properties } ? ObjectInput<Properties, RequiredNames<Schema>>
  : Schema extends { type: 'object' } ? Record<string, unknown>
  : unknown;

type RequiredNames<Schema> = Schema extends { required: readonly (infer Name)[] } ? Name : never;

/** Required properties as they are, the others optional; flattened so editors show one object. */
type ObjectInput<Properties, Required> = Flatten<
  { -readonly [Name in keyof Properties as Name extends Required ? Name : never]: SchemaInput<Properties[Name]> } &
  { -readonly [Name in keyof Properties as Name extends Required ? never : Name]?: SchemaInput<Properties[Name]> }
>;

type Flatten<Value> = { [Name in keyof Value]: Value[Name] } & {};
