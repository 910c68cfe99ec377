import type { ComponentChildren } from 'preact';
import { Card } from './ui.tsx';

/** A table's header: a row of column headers. */
export function THead(props: { cols: readonly ComponentChildren[] }) {
  return (
    <thead>
      <tr>
        {props.cols.map((c, i) => (
          <th scope="col" key={i}>
            {c}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** A card titled with the count of its `items`: `empty` when there is none, else their table. */
export function TableCard<T>(props: {
  title: string;
  id: string;
  items: readonly T[];
  empty: string;
  cols: readonly ComponentChildren[];
  row: (item: T, i: number) => ComponentChildren;
}) {
  return (
    <Card title={`${props.title} (${props.items.length})`} id={props.id}>
      {props.items.length === 0 ? (
        <p>{props.empty}</p>
      ) : (
        <table>
          <THead cols={props.cols} />
          <tbody>{props.items.map(props.row)}</tbody>
        </table>
      )}
    </Card>
  );
}
