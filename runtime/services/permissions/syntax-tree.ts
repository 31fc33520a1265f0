/**
 * A tree-sitter parse tree copied once, with a TreeCursor, into plain objects. web-tree-sitter's
 * own Node marshals every property through WASM memory on every access (its type, its children,
 * each child again as a new object), which made walking a 2 KB command cost more than parsing it.
 * The copy reads each node once; the shell analysis then walks plain JavaScript.
 *
 * It offers the part of web-tree-sitter's Node that the analysis uses, with the same meaning:
 * `childForFieldName` is the first child the cursor reports in that field, `childrenForFieldName`
 * all of them, `descendantsOfType` the node and its descendants in document order.
 */
import type { Language, Tree, TreeCursor } from 'web-tree-sitter';

export class SyntaxNode {
  readonly children: SyntaxNode[] = [];
  private named: SyntaxNode[] | undefined;

  constructor(
    private readonly source: string,
    readonly type: string,
    readonly isNamed: boolean,
    readonly isMissing: boolean,
    readonly startIndex: number,
    readonly endIndex: number,
    /** The field of its parent this node fills, if any. */
    readonly field: string | null,
    readonly parent: SyntaxNode | null,
  ) {}

  get text(): string {
    return this.source.slice(this.startIndex, this.endIndex);
  }

  get namedChildren(): readonly SyntaxNode[] {
    this.named ??= this.children.filter((child) => child.isNamed);
    return this.named;
  }

  get firstChild(): SyntaxNode | null {
    return this.children[0] ?? null;
  }

  childForFieldName(field: string): SyntaxNode | null {
    return this.children.find((child) => child.field === field) ?? null;
  }

  childrenForFieldName(field: string): SyntaxNode[] {
    return this.children.filter((child) => child.field === field);
  }

  /** This node and its descendants of the given types, in document order. */
  descendantsOfType(types: string | readonly string[]): SyntaxNode[] {
    const wanted = typeof types === 'string' ? [types] : types;
    const found: SyntaxNode[] = [];
    const visit = (node: SyntaxNode) => {
      // As tree-sitter's own search, which skips what ends before the start of the text.
      if (node.endIndex === 0) return;
      if (wanted.includes(node.type)) found.push(node);
      for (const child of node.children) visit(child);
    };
    visit(this);
    return found;
  }
}

/**
 * The whole tree, read with one cursor walk. Each read through the cursor is a call into WASM, so
 * only what varies from node to node is read: whether a type is named is asked once per type, and
 * whether a node is missing only of a tree with errors (a tree without any has no missing node).
 */
export function copySyntaxTree(tree: Tree, source: string, hasError: boolean): SyntaxNode {
  const cursor = tree.walk();
  const reader = new NodeReader(cursor, tree.language, source, hasError);
  try {
    const root = reader.node(null);
    let current = root;
    // Depth-first: down to the first child, else on to the next sibling, else back up until one has a next sibling.
    for (;;) {
      if (cursor.gotoFirstChild()) {
        const child = reader.node(current);
        current.children.push(child);
        current = child;
        continue;
      }
      for (;;) {
        if (cursor.gotoNextSibling()) {
          const parent = current.parent!;
          current = reader.node(parent);
          parent.children.push(current);
          break;
        }
        if (!cursor.gotoParent()) return root;
        current = current.parent!;
      }
    }
  } finally {
    cursor.delete();
  }
}

class NodeReader {
  private readonly named = new Map<number, boolean>();

  constructor(
    private readonly cursor: TreeCursor,
    private readonly language: Language,
    private readonly source: string,
    private readonly hasError: boolean,
  ) {}

  /** The node under the cursor. */
  node(parent: SyntaxNode | null): SyntaxNode {
    const { cursor, language } = this;
    const typeId = cursor.nodeTypeId;
    let isNamed = this.named.get(typeId);
    if (isNamed === undefined) this.named.set(typeId, (isNamed = language.nodeTypeIsNamed(typeId)));
    return new SyntaxNode(
      this.source,
      // As web-tree-sitter names them: the error symbol has no entry in the language's types.
      language.types[typeId] || 'ERROR',
      isNamed,
      this.hasError && cursor.nodeIsMissing,
      cursor.startIndex,
      cursor.endIndex,
      language.fields[cursor.currentFieldId] ?? null,
      parent,
    );
  }
}
