import Testing
import PeerNote

/// The library example in README.md, kept honest.
@Test("README library example")
func readmeLibraryExample() throws {
    let doc = Document(title: "Groceries", author: "alice")
    let milk = doc.addNote(title: "Milk", body: "2 litres", tags: ["dairy"])
    let phone = doc.fork(author: "bob")
    try doc.insertText(milk, at: 0, "Oat ")
    try phone.setBody(milk, "2 litres, semi-skimmed")
    try doc.merge(phone)
    #expect(doc.notebook.notes[0].body == "Oat 2 litres, semi-skimmed")
    let bytes = doc.save()
    let again = try Document.load(bytes)
    #expect(again.notebook == doc.notebook)
}
